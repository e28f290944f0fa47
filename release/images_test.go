package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

var testMeta = meta{version: "v0.0.0-test", revision: "0123456789abcdef", created: time.Unix(1764000000, 0).UTC(),
	source: "https://github.com/ctxgate/ctxgate"}

// committedFilter is guest/envoy/envoy-filter.wasm, the filter the release ships.
func committedFilter(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "guest", "envoy", "envoy-filter.wasm"))
	if err != nil {
		t.Fatalf("the committed filter: %v", err)
	}
	return b
}

var (
	serveBinOnce sync.Once
	serveBin     []byte
	serveBinErr  error
)

// linuxBinary is ctxgate built as dist.sh builds it (static, trimmed), for
// linux/amd64, once per test binary.
func linuxBinary(t *testing.T) []byte {
	t.Helper()
	serveBinOnce.Do(func() {
		out := filepath.Join(os.TempDir(), "ctxgate-release-test-"+strings.TrimPrefix(testMeta.version, "v"))
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X main.version="+testMeta.version, "-o", out, "./cmd/ctxgate")
		cmd.Dir = ".."
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
		if msg, err := cmd.CombinedOutput(); err != nil {
			serveBinErr = &buildError{msg: string(msg), err: err}
			return
		}
		serveBin, serveBinErr = os.ReadFile(out)
		os.Remove(out)
	})
	if serveBinErr != nil {
		t.Fatalf("go build ./cmd/ctxgate: %v", serveBinErr)
	}
	return serveBin
}

type buildError struct {
	msg string
	err error
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.msg }

// TestFilterImage writes the committed filter as the compat-variant image
// into an OCI layout, reads it back with go-containerregistry the way
// Istio's fetcher does, and checks the layer's plugin.wasm is the filter.
func TestFilterImage(t *testing.T) {
	wasm := committedFilter(t)
	img, err := filterImage(wasm, testMeta)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	digest, err := writeLayout(dir, testMeta.version, img)
	if err != nil {
		t.Fatal(err)
	}
	idx, d, err := readLayout(dir, testMeta.version)
	if err != nil {
		t.Fatal(err)
	}
	if d.Digest != digest || d.MediaType != types.OCIManifestSchema1 {
		t.Errorf("layout entry %s %s, want the image %s", d.MediaType, d.Digest, digest)
	}
	back, err := idx.Image(d.Digest)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkFilterImage(back, wasm); err != nil {
		t.Fatal(err)
	}
	mf, _ := back.Manifest()
	if got := mf.Annotations["org.opencontainers.image.version"]; got != testMeta.version {
		t.Errorf("version annotation %q", got)
	}

	// The same inputs give the same image: a rebuilt release can be compared.
	again, err := filterImage(wasm, testMeta)
	if err != nil {
		t.Fatal(err)
	}
	if d2, _ := again.Digest(); d2 != digest {
		t.Errorf("image digest %s, then %s: not reproducible", digest, d2)
	}

	// The check tells other bytes and other layouts apart.
	other := append(append([]byte(nil), wasm...), 0)
	if err := checkFilterImage(back, other); err == nil {
		t.Error("checkFilterImage accepted bytes that are not the filter")
	}
	l, _ := tarLayer([]file{{name: "module.wasm", mode: 0o644, data: wasm}}, testMeta.created)
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	renamed, _ := mutate.Append(base, mutate.Addendum{Layer: l, MediaType: types.OCILayer})
	if err := checkFilterImage(renamed, wasm); err == nil || !strings.Contains(err.Error(), pluginFile) {
		t.Errorf("an image without %s: %v", pluginFile, err)
	}
	if _, err := filterImage([]byte("not wasm"), testMeta); err == nil {
		t.Error("filterImage took bytes that are not a Wasm module")
	}
}

// TestServeImage writes the serve image index (linux amd64 and arm64) into
// an OCI layout and reads it back: entrypoint, command, non-root user,
// exposed port, and the binary in each platform's layer is the one given.
func TestServeImage(t *testing.T) {
	amd64 := linuxBinary(t)
	// The index is checked platform by platform against the bytes given for
	// it; a stand-in for arm64 saves a second cross build here (make dist
	// checks both real binaries the same way).
	arm64 := []byte("stand-in for the linux/arm64 binary")
	bins := []platformBinary{
		{platform: v1.Platform{OS: "linux", Architecture: "amd64"}, binary: amd64},
		{platform: v1.Platform{OS: "linux", Architecture: "arm64"}, binary: arm64},
	}
	idx, err := serveIndex(bins, []byte("-----BEGIN CERTIFICATE-----\n"), testMeta)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := writeLayout(dir, testMeta.version, idx); err != nil {
		t.Fatal(err)
	}
	top, d, err := readLayout(dir, testMeta.version)
	if err != nil {
		t.Fatal(err)
	}
	if d.MediaType != types.OCIImageIndex {
		t.Fatalf("layout entry is %s, want an image index", d.MediaType)
	}
	back, err := top.ImageIndex(d.Digest)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkServeIndex(back, bins); err != nil {
		t.Fatal(err)
	}
	swapped := []platformBinary{{platform: bins[0].platform, binary: arm64}, {platform: bins[1].platform, binary: amd64}}
	if err := checkServeIndex(back, swapped); err == nil {
		t.Error("checkServeIndex accepted the binaries under each other's platform")
	}

	img, err := back.Image(mustDigest(t, back, "amd64"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := layerFiles(mustLayer(t, img))
	if err != nil {
		t.Fatal(err)
	}
	if f := files["tmp/"]; f.mode&0o1777 != 0o1777 {
		t.Errorf("/tmp mode %o, want 1777", f.mode)
	}
	if !bytes.Contains(files["etc/passwd"].data, []byte(":65532:65532:")) {
		t.Errorf("/etc/passwd has no entry for the image's user: %q", files["etc/passwd"].data)
	}
	if _, ok := files[caBundle]; !ok {
		t.Errorf("no %s in the layer", caBundle)
	}
}

func mustDigest(t *testing.T, idx v1.ImageIndex, arch string) v1.Hash {
	t.Helper()
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range im.Manifests {
		if d.Platform != nil && d.Platform.Architecture == arch {
			return d.Digest
		}
	}
	t.Fatalf("no %s image", arch)
	return v1.Hash{}
}

func mustLayer(t *testing.T, img v1.Image) v1.Layer {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers: %d, %v", len(layers), err)
	}
	return layers[0]
}

// TestDistReadsBack checks a dist/ that make dist wrote, when there is one
// (make dist verifies itself the same way before it returns).
func TestDistReadsBack(t *testing.T) {
	dist := filepath.Join("..", "dist")
	if _, err := os.Stat(filepath.Join(dist, sumsFile)); err != nil {
		t.Skip("no dist/ (make dist writes it)")
	}
	p, err := layout.FromPath(filepath.Join(dist, serveLayout))
	if err != nil {
		t.Fatal(err)
	}
	im, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	mf, err := im.IndexManifest()
	if err != nil || len(mf.Manifests) == 0 {
		t.Fatalf("%s: %v", serveLayout, err)
	}
	if err := verifyDist(dist, mf.Manifests[0].Annotations[refName]); err != nil {
		t.Fatal(err)
	}
}
