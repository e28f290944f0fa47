package main

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// pluginFile is the file name the Wasm image specification's compat variant
// requires; Istio's fetcher reads the last layer, which must be an OCI (or
// Docker) gzip tar layer, and takes the file of this name from it.
const pluginFile = "plugin.wasm"

// meta is what the images say about the release.
type meta struct {
	version  string    // e.g. v0.1.0
	revision string    // the git commit
	created  time.Time // the commit's time: every timestamp in the images
	source   string    // the repository URL
}

// annotations are the OCI pre-defined annotations of a release image.
func (m meta) annotations(title, description string) map[string]string {
	a := map[string]string{
		"org.opencontainers.image.title":       title,
		"org.opencontainers.image.description": description,
		"org.opencontainers.image.version":     m.version,
		"org.opencontainers.image.created":     m.created.UTC().Format(time.RFC3339),
		"org.opencontainers.image.licenses":    "Apache-2.0",
	}
	if m.revision != "" {
		a["org.opencontainers.image.revision"] = m.revision
	}
	if m.source != "" {
		a["org.opencontainers.image.source"] = m.source
	}
	return a
}

// filterImage is the Envoy filter as an image in the Wasm image
// specification's compat variant: an OCI image manifest whose one layer is
// an application/vnd.oci.image.layer.v1.tar+gzip holding plugin.wasm. Istio's
// WasmPlugin pulls it with `url: oci://...`; any OCI registry stores it.
func filterImage(wasm []byte, m meta) (v1.Image, error) {
	if len(wasm) < 8 || !bytes.Equal(wasm[:4], []byte("\x00asm")) {
		return nil, errors.New("the filter is not a Wasm module")
	}
	layer, err := tarLayer([]file{{name: pluginFile, mode: 0o644, data: wasm}}, m.created)
	if err != nil {
		return nil, err
	}
	return oneLayerImage(layer, map[string]string{"org.opencontainers.image.title": pluginFile},
		"ctxgate release: guest/envoy/envoy-filter.wasm as "+pluginFile, m,
		m.annotations("ctxgate-envoy-filter", "ctxgate proxy-wasm HTTP filter (Wasm image specification, compat variant)"),
		func(cfg *v1.ConfigFile) { cfg.OS, cfg.Architecture = "wasip1", "wasm" })
}

// checkFilterImage reads an image back the way Istio's fetcher does and
// checks that it is the compat variant and that plugin.wasm is wasm.
func checkFilterImage(img v1.Image, wasm []byte) error {
	mf, err := img.Manifest()
	if err != nil {
		return err
	}
	if mf.MediaType != types.OCIManifestSchema1 || mf.Config.MediaType != types.OCIConfigJSON {
		return fmt.Errorf("manifest %s with config %s, want an OCI image manifest and config", mf.MediaType, mf.Config.MediaType)
	}
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	if len(layers) != 1 {
		return fmt.Errorf("%d layers, want 1", len(layers))
	}
	mt, err := layers[0].MediaType()
	if err != nil {
		return err
	}
	if mt != types.OCILayer {
		return fmt.Errorf("layer media type %s, want %s", mt, types.OCILayer)
	}
	files, err := layerFiles(layers[0])
	if err != nil {
		return fmt.Errorf("layer: %w", err)
	}
	if len(files) != 1 {
		return fmt.Errorf("layer holds %d entries, want only %s", len(files), pluginFile)
	}
	got, ok := files[pluginFile]
	if !ok {
		return fmt.Errorf("layer has no %s", pluginFile)
	}
	if !bytes.Equal(got.data, wasm) {
		return fmt.Errorf("%s in the layer (%d bytes, sha256 %s) is not the filter (%d bytes, sha256 %s)",
			pluginFile, len(got.data), sha256Hex(got.data), len(wasm), sha256Hex(wasm))
	}
	return nil
}
