package main

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The serve image's fixed parts. deploy/k8s and the Dockerfile use the same
// values (release's TestServeManifestsMatchImage checks them).
const (
	serveBinary = "ctxgate"     // at the image root
	servePort   = "8080/tcp"    // ctxgate serve --listen :8080
	serveUser   = "65532:65532" // distroless's nonroot
	caBundle    = "etc/ssl/certs/ca-certificates.crt"
)

var (
	serveEntrypoint = []string{"/" + serveBinary}
	serveCmd        = []string{"serve", "--listen", ":8080"}
)

// platformBinary is a static ctxgate binary for one linux platform.
type platformBinary struct {
	platform v1.Platform
	binary   []byte
}

// serveImage is `ctxgate serve` on no base image: one layer with the static
// binary, the CA bundle (gateway mode calls HTTPS upstreams), passwd and
// group entries for the non-root user, and a writable /tmp.
func serveImage(pb platformBinary, ca []byte, m meta) (v1.Image, error) {
	if len(pb.binary) == 0 {
		return nil, errors.New("no binary")
	}
	files := []file{
		{name: serveBinary, mode: 0o755, data: pb.binary},
		{name: "etc/", mode: 0o755},
		{name: "etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/tmp:/sbin/nologin\n")},
		{name: "etc/group", mode: 0o644, data: []byte("root:x:0:\nnonroot:x:65532:\n")},
		{name: "tmp/", mode: 0o1777},
	}
	if len(ca) > 0 {
		files = append(files, file{name: "etc/ssl/", mode: 0o755}, file{name: "etc/ssl/certs/", mode: 0o755},
			file{name: caBundle, mode: 0o644, data: ca})
	}
	layer, err := tarLayer(files, m.created)
	if err != nil {
		return nil, err
	}
	return oneLayerImage(layer, nil, "ctxgate release: static ctxgate "+m.version, m,
		m.annotations("ctxgate", "ctxgate serve: the retrieval-confidence gate as an HTTP API and OpenAI-compatible gateway"),
		func(cfg *v1.ConfigFile) {
			cfg.OS, cfg.Architecture, cfg.Variant = pb.platform.OS, pb.platform.Architecture, pb.platform.Variant
			cfg.Config.Entrypoint = serveEntrypoint
			cfg.Config.Cmd = serveCmd
			cfg.Config.User = serveUser
			cfg.Config.WorkingDir = "/"
			cfg.Config.ExposedPorts = map[string]struct{}{servePort: {}}
		})
}

// serveIndex is one image per platform under an OCI image index, so that a
// pull picks the node's architecture.
func serveIndex(bins []platformBinary, ca []byte, m meta) (v1.ImageIndex, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, pb := range bins {
		img, err := serveImage(pb, ca, m)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", pb.platform, err)
		}
		p := pb.platform
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &p}})
	}
	return mutate.Annotations(idx, m.annotations("ctxgate", "ctxgate serve")).(v1.ImageIndex), nil
}

// checkServeImage reads an image back and checks what a container runtime
// would run: the entrypoint and command, the non-root user, the exposed port,
// and that the binary in the layer is exactly want.
func checkServeImage(img v1.Image, want platformBinary) error {
	cfg, err := img.ConfigFile()
	if err != nil {
		return err
	}
	c := cfg.Config
	switch {
	case !slices.Equal(c.Entrypoint, serveEntrypoint) || !slices.Equal(c.Cmd, serveCmd):
		return fmt.Errorf("entrypoint %q cmd %q, want %q %q", c.Entrypoint, c.Cmd, serveEntrypoint, serveCmd)
	case c.User != serveUser:
		return fmt.Errorf("user %q, want %q (non-root)", c.User, serveUser)
	case len(c.ExposedPorts) != 1:
		return fmt.Errorf("exposed ports %v, want only %s", c.ExposedPorts, servePort)
	case cfg.OS != want.platform.OS || cfg.Architecture != want.platform.Architecture:
		return fmt.Errorf("config platform %s/%s, want %s", cfg.OS, cfg.Architecture, want.platform)
	}
	if _, ok := c.ExposedPorts[servePort]; !ok {
		return fmt.Errorf("exposed ports %v, want %s", c.ExposedPorts, servePort)
	}
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	if len(layers) != 1 {
		return fmt.Errorf("%d layers, want 1", len(layers))
	}
	files, err := layerFiles(layers[0])
	if err != nil {
		return err
	}
	bin, ok := files[serveBinary]
	switch {
	case !ok:
		return fmt.Errorf("no /%s in the layer", serveBinary)
	case bin.mode&0o111 == 0:
		return fmt.Errorf("/%s is not executable (mode %o)", serveBinary, bin.mode)
	case !bytes.Equal(bin.data, want.binary):
		return fmt.Errorf("/%s in the layer (sha256 %s) is not the binary built (sha256 %s)",
			serveBinary, sha256Hex(bin.data), sha256Hex(want.binary))
	}
	return nil
}

// checkServeIndex checks every platform of the index against its binary.
func checkServeIndex(idx v1.ImageIndex, want []platformBinary) error {
	im, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	if len(im.Manifests) != len(want) {
		return fmt.Errorf("index has %d manifests, want %d", len(im.Manifests), len(want))
	}
	for _, pb := range want {
		var found *v1.Descriptor
		for i, d := range im.Manifests {
			if d.Platform != nil && d.Platform.OS == pb.platform.OS && d.Platform.Architecture == pb.platform.Architecture {
				found = &im.Manifests[i]
			}
		}
		if found == nil {
			return fmt.Errorf("index has no %s image", pb.platform)
		}
		img, err := idx.Image(found.Digest)
		if err != nil {
			return err
		}
		if err := checkServeImage(img, pb); err != nil {
			return fmt.Errorf("%s: %w", pb.platform, err)
		}
	}
	return nil
}
