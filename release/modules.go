package main

import (
	"bytes"
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/mod/module"
)

// goModule is one Go module compiled into a release file.
type goModule struct {
	Path, Version, Sum string
}

func (m goModule) key() string { return m.Path + "@" + m.Version }

// binaryModules are the modules a Go binary was linked from, as its build
// info records them (what `go version -m` prints), replacements resolved.
func binaryModules(path string) (goVersion string, mods []goModule, err error) {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return "", nil, err
	}
	for _, d := range bi.Deps {
		if d.Replace != nil {
			d = d.Replace
		}
		mods = append(mods, goModule{d.Path, d.Version, d.Sum})
	}
	return bi.GoVersion, mods, nil
}

// guestModules are the modules the Wasm guests compile, from the go command
// run in the repository root (GOOS=wasip1 GOARCH=wasm; TinyGo compiles the
// same packages). Go's wasm build info is not readable by debug/buildinfo.
func guestModules(root string, pkgs ...string) ([]goModule, error) {
	cmd := exec.Command("go", append([]string{"list", "-deps", "-json=Module"}, pkgs...)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %v: %s", strings.Join(pkgs, " "), err, stderr.String())
	}
	seen := map[string]bool{}
	var mods []goModule
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p struct {
			Module *struct {
				Path, Version string
				Main          bool
				Replace       *struct{ Path, Version string }
			}
		}
		if err := dec.Decode(&p); err != nil {
			return nil, err
		}
		if p.Module == nil || p.Module.Main {
			continue
		}
		m := goModule{Path: p.Module.Path, Version: p.Module.Version}
		if r := p.Module.Replace; r != nil {
			m = goModule{Path: r.Path, Version: r.Version}
		}
		if !seen[m.key()] {
			seen[m.key()] = true
			mods = append(mods, m)
		}
	}
	return mods, sumModules(root, mods)
}

// sumModules fills in each module's go.sum hash from the repository's go.sum.
func sumModules(root string, mods []goModule) error {
	b, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		return err
	}
	sums := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 3 && !strings.HasSuffix(f[1], "/go.mod") {
			sums[f[0]+"@"+f[1]] = f[2]
		}
	}
	for i := range mods {
		if mods[i].Sum == "" {
			mods[i].Sum = sums[mods[i].key()]
		}
	}
	return nil
}

// moduleDir is where the module cache holds a module's files.
func moduleDir(modcache string, m goModule) (string, error) {
	p, err := module.EscapePath(m.Path)
	if err != nil {
		return "", err
	}
	v, err := module.EscapeVersion(m.Version)
	if err != nil {
		return "", err
	}
	return filepath.Join(modcache, p+"@"+v), nil
}

// union merges module lists, sorted by path and version.
func union(lists ...[]goModule) []goModule {
	byKey := map[string]goModule{}
	for _, l := range lists {
		for _, m := range l {
			if old, ok := byKey[m.key()]; !ok || old.Sum == "" {
				byKey[m.key()] = m
			}
		}
	}
	out := make([]goModule, 0, len(byKey))
	for _, m := range byKey {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key() < out[j].key() })
	return out
}
