package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	cdx "github.com/CycloneDX/cyclonedx-go"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// platforms are the release binaries' targets, in the order dist.sh builds
// them; the linux ones go into the serve image.
var platforms = []v1.Platform{
	{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"},
	{OS: "darwin", Architecture: "amd64"}, {OS: "darwin", Architecture: "arm64"},
	{OS: "windows", Architecture: "amd64"}, {OS: "windows", Architecture: "arm64"},
}

func binaryName(p v1.Platform) string {
	n := "ctxgate-" + p.OS + "-" + p.Architecture
	if p.OS == "windows" {
		n += ".exe"
	}
	return n
}

// The release modules: their committed paths and their names in dist/.
var releaseModules = []struct{ src, name string }{
	{"host/wasm/ctxgate.wasm", "ctxgate.wasm"},
	{"host/wasm/ctxgate-go.wasm", "ctxgate-go.wasm"},
	{"guest/envoy/envoy-filter.wasm", "envoy-filter.wasm"},
}

// The OCI image layouts in dist/.
const (
	filterLayout = "oci/envoy-filter"
	serveLayout  = "oci/ctxgate"
	sbomFile     = "ctxgate.cdx.json"
	licenceFile  = "THIRD_PARTY_LICENSES.txt"
	sumsFile     = "SHA256SUMS"
)

type distConfig struct {
	meta
	root, dist    string // the repository and dist/ (holding the binaries)
	tinygoVersion string
	tinygoDir     string // TinyGo's source tree (its LICENSE)
	caBundle      string // put into the serve image; "" for none
	debianDocs    []string
}

// makeDist completes dist/ around the binaries dist.sh built: the modules,
// the two OCI image layouts, the SBOM, the third-party licences and
// SHA256SUMS, then reads everything back (verifyDist).
func makeDist(c distConfig) error {
	read := func(p string) ([]byte, error) { return os.ReadFile(filepath.Join(c.dist, p)) }
	write := func(p string, b []byte) error { return os.WriteFile(filepath.Join(c.dist, p), b, 0o644) }
	modcache, err := goEnv(c.root, "GOMODCACHE")
	if err != nil {
		return err
	}
	goroot, err := goEnv(c.root, "GOROOT")
	if err != nil {
		return err
	}

	var files []releaseFile
	wasm := map[string][]byte{}
	for _, m := range releaseModules {
		b, err := os.ReadFile(filepath.Join(c.root, m.src))
		if err != nil {
			return err
		}
		if err := write(m.name, b); err != nil {
			return err
		}
		wasm[m.name] = b
	}
	extism, err := guestModules(c.root, "./guest/extism")
	if err != nil {
		return err
	}
	envoy, err := guestModules(c.root, "./guest/envoy")
	if err != nil {
		return err
	}
	files = append(files,
		releaseFile{name: "ctxgate.wasm", data: wasm["ctxgate.wasm"], kind: cdx.ComponentTypeFile, deps: extism, tinygo: true},
		releaseFile{name: "ctxgate-go.wasm", data: wasm["ctxgate-go.wasm"], kind: cdx.ComponentTypeFile, deps: extism},
		releaseFile{name: "envoy-filter.wasm", data: wasm["envoy-filter.wasm"], kind: cdx.ComponentTypeFile, deps: envoy, tinygo: true})

	var goVersion string
	var linux []platformBinary
	all := [][]goModule{extism, envoy}
	for _, p := range platforms {
		name := binaryName(p)
		b, err := read(name)
		if err != nil {
			return fmt.Errorf("%w (dist.sh builds the binaries first)", err)
		}
		gv, deps, err := binaryModules(filepath.Join(c.dist, name))
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		goVersion = gv
		all = append(all, deps)
		files = append(files, releaseFile{name: name, data: b, kind: cdx.ComponentTypeApplication, deps: deps,
			embeds: []string{"ctxgate.wasm", "ctxgate-go.wasm"}})
		if p.OS == "linux" {
			linux = append(linux, platformBinary{platform: p, binary: b})
		}
	}

	// Images.
	img, err := filterImage(wasm["envoy-filter.wasm"], c.meta)
	if err != nil {
		return err
	}
	if _, err := writeLayout(filepath.Join(c.dist, filterLayout), c.version, img); err != nil {
		return err
	}
	var ca []byte
	if c.caBundle != "" {
		if ca, err = os.ReadFile(c.caBundle); err != nil {
			return err
		}
	}
	idx, err := serveIndex(linux, ca, c.meta)
	if err != nil {
		return err
	}
	if _, err := writeLayout(filepath.Join(c.dist, serveLayout), c.version, idx); err != nil {
		return err
	}

	// Licences and the SBOM.
	mods := union(all...)
	licences := map[string]string{}
	sources := []noticeSource{{title: "Go " + goVersion + " (standard library and runtime)", dir: goroot, files: []string{"LICENSE"}}}
	for _, m := range mods {
		dir, err := moduleDir(modcache, m)
		if err != nil {
			return err
		}
		id, _, err := moduleLicence(dir)
		if err != nil {
			return fmt.Errorf("%s: %w (is the module downloaded?)", m.key(), err)
		}
		licences[m.key()] = id
		sources = append(sources, noticeSource{title: m.Path + " " + m.Version, dir: dir})
	}
	if c.tinygoDir != "" {
		sources = append(sources, noticeSource{title: "TinyGo " + c.tinygoVersion + " (runtime in ctxgate.wasm and envoy-filter.wasm)", dir: c.tinygoDir, files: []string{"LICENSE"}})
	}
	for _, d := range c.debianDocs {
		sources = append(sources, noticeSource{title: "Debian package " + filepath.Base(d) + " (linked into the TinyGo modules)", dir: d, files: []string{"copyright"}})
	}
	if err := writeThirdPartyLicences(filepath.Join(c.dist, licenceFile), sources); err != nil {
		return err
	}
	var sbom bytes.Buffer
	if err := writeSBOM(&sbom, buildSBOM(sbomInput{meta: c.meta, goVersion: goVersion, tinygoVersion: c.tinygoVersion,
		files: files, licences: licences})); err != nil {
		return err
	}
	if err := write(sbomFile, sbom.Bytes()); err != nil {
		return err
	}

	// Checksums of every top-level file.
	entries, err := os.ReadDir(c.dist)
	if err != nil {
		return err
	}
	var sums strings.Builder
	for _, e := range entries {
		if e.Type().IsRegular() && e.Name() != sumsFile && !strings.HasPrefix(e.Name(), ".") {
			b, err := read(e.Name())
			if err != nil {
				return err
			}
			fmt.Fprintf(&sums, "%s  %s\n", sha256Hex(b), e.Name())
		}
	}
	if err := write(sumsFile, []byte(sums.String())); err != nil {
		return err
	}
	return verifyDist(c.dist, c.version)
}

// verifyDist reads a finished dist/ back: SHA256SUMS, the filter image (the
// compat variant holding exactly envoy-filter.wasm), the serve image (each
// linux binary under its platform, with the runtime config), and the SBOM's
// hashes of every file.
func verifyDist(dist, version string) error {
	read := func(p string) ([]byte, error) { return os.ReadFile(filepath.Join(dist, p)) }
	sums, err := read(sumsFile)
	if err != nil {
		return err
	}
	listed := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			return fmt.Errorf("%s: bad line %q", sumsFile, line)
		}
		b, err := read(name)
		if err != nil {
			return err
		}
		if sha256Hex(b) != sum {
			return fmt.Errorf("%s: %s does not match", sumsFile, name)
		}
		listed[name] = sum
	}

	filter, err := read("envoy-filter.wasm")
	if err != nil {
		return err
	}
	idx, d, err := readLayout(filepath.Join(dist, filterLayout), version)
	if err != nil {
		return err
	}
	img, err := idx.Image(d.Digest)
	if err != nil {
		return fmt.Errorf("%s: %w", filterLayout, err)
	}
	if err := checkFilterImage(img, filter); err != nil {
		return fmt.Errorf("%s: %w", filterLayout, err)
	}

	var linux []platformBinary
	for _, p := range platforms {
		if p.OS != "linux" {
			continue
		}
		b, err := read(binaryName(p))
		if err != nil {
			return err
		}
		linux = append(linux, platformBinary{platform: p, binary: b})
	}
	idx, d, err = readLayout(filepath.Join(dist, serveLayout), version)
	if err != nil {
		return err
	}
	ii, err := idx.ImageIndex(d.Digest)
	if err != nil {
		return fmt.Errorf("%s: %w", serveLayout, err)
	}
	if err := checkServeIndex(ii, linux); err != nil {
		return fmt.Errorf("%s: %w", serveLayout, err)
	}

	b, err := read(sbomFile)
	if err != nil {
		return err
	}
	var bom cdx.BOM
	if err := cdx.NewBOMDecoder(bytes.NewReader(b), cdx.BOMFileFormatJSON).Decode(&bom); err != nil {
		return fmt.Errorf("%s: %w", sbomFile, err)
	}
	fileHashes := map[string]string{}
	for _, c := range *bom.Components {
		if strings.HasPrefix(c.BOMRef, "file:") && c.Hashes != nil {
			fileHashes[c.Name] = (*c.Hashes)[0].Value
		}
	}
	var names []string
	for name := range listed {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !strings.HasSuffix(name, ".wasm") && !strings.HasPrefix(name, "ctxgate-") {
			continue
		}
		if fileHashes[name] != listed[name] {
			return fmt.Errorf("%s: %s has sha256 %q, the file %s", sbomFile, name, fileHashes[name], listed[name])
		}
	}
	return nil
}

func goEnv(dir, name string) (string, error) {
	cmd := exec.Command("go", "env", name)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go env %s: %w", name, err)
	}
	return strings.TrimSpace(string(out)), nil
}
