package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

// writeProxy lays out a module proxy in out (the GOPROXY protocol's files,
// which the go command reads from a file:// URL) that serves dir as
// mod@version: list, .info, .mod and the module zip, made by x/mod/zip with
// the rules the go command applies to a repository (nested modules, vendor
// directories and VCS metadata left out; size limits checked). A
// `go install mod/cmd@version` through it is the install a user makes once
// the version is tagged.
func writeProxy(dir, mod, version, out string) error {
	mv := module.Version{Path: mod, Version: version}
	if err := module.Check(mod, version); err != nil {
		return err
	}
	esc, err := module.EscapePath(mod)
	if err != nil {
		return err
	}
	ev, err := module.EscapeVersion(version)
	if err != nil {
		return err
	}
	base := filepath.Join(out, esc, "@v")
	if err := os.MkdirAll(base, 0o755); err != nil {
		return err
	}
	z, err := os.Create(filepath.Join(base, ev+".zip"))
	if err != nil {
		return err
	}
	if err := zip.CreateFromDir(z, mv, dir); err != nil {
		z.Close()
		return err
	}
	if err := z.Close(); err != nil {
		return err
	}
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(base, ev+".mod"), gomod, 0o644); err != nil {
		return err
	}
	info, _ := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, time.Now().UTC().Truncate(time.Second)})
	if err := os.WriteFile(filepath.Join(base, ev+".info"), info, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(base, "list"), []byte(version+"\n"), 0o644)
}
