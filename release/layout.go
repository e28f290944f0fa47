package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// oneLayerImage is an OCI image (OCI manifest and config media types) of one
// gzip tar layer, every timestamp m.created, labels both in the config and
// as the manifest's annotations; edit sets the rest of the config.
func oneLayerImage(layer v1.Layer, layerAnn map[string]string, createdBy string, m meta,
	labels map[string]string, edit func(*v1.ConfigFile)) (v1.Image, error) {
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.Append(img, mutate.Addendum{
		Layer:       layer,
		MediaType:   types.OCILayer,
		Annotations: layerAnn,
		History:     v1.History{Created: v1.Time{Time: m.created}, CreatedBy: createdBy},
	})
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.Created = v1.Time{Time: m.created}
	cfg.Config.Labels = labels
	edit(cfg)
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return nil, err
	}
	return mutate.Annotations(img, labels).(v1.Image), nil
}

// refName is the annotation by which tools find an image in a layout:
// `skopeo copy oci:dist/oci/envoy-filter:v0.1.0 docker://...`.
const refName = "org.opencontainers.image.ref.name"

// writeLayout writes an image or an index as the only entry of a fresh OCI
// image layout in dir, tagged tag, and returns its digest.
func writeLayout(dir, tag string, add interface {
	Digest() (v1.Hash, error)
}) (v1.Hash, error) {
	if err := os.RemoveAll(dir); err != nil {
		return v1.Hash{}, err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return v1.Hash{}, err
	}
	ann := layout.WithAnnotations(map[string]string{refName: tag})
	switch a := add.(type) {
	case v1.Image:
		err = p.AppendImage(a, ann)
	case v1.ImageIndex:
		err = p.AppendIndex(a, ann)
	default:
		err = fmt.Errorf("cannot write %T", add)
	}
	if err != nil {
		return v1.Hash{}, err
	}
	return add.Digest()
}

// readLayout opens the layout in dir and returns the descriptor of its one
// entry, tagged tag.
func readLayout(dir, tag string) (v1.ImageIndex, v1.Descriptor, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, v1.Descriptor{}, err
	}
	idx, err := p.ImageIndex()
	if err != nil {
		return nil, v1.Descriptor{}, err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, v1.Descriptor{}, err
	}
	if len(im.Manifests) != 1 {
		return nil, v1.Descriptor{}, fmt.Errorf("%s: %d entries in index.json, want 1", dir, len(im.Manifests))
	}
	d := im.Manifests[0]
	if got := d.Annotations[refName]; got != tag {
		return nil, v1.Descriptor{}, fmt.Errorf("%s: tagged %q, want %q", dir, got, tag)
	}
	return idx, d, nil
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
