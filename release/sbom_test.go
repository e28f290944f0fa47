package main

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	cdx "github.com/CycloneDX/cyclonedx-go"
)

// TestSBOM builds the SBOM of a release of one file, this test binary
// (whose build info lists real modules), and reads it back with cyclonedx-go.
func TestSBOM(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	goVersion, deps, err := binaryModules(self)
	if err != nil {
		t.Fatal(err)
	}
	if len(deps) == 0 {
		t.Fatal("the test binary's build info lists no modules")
	}
	data := []byte("the binary's bytes")
	in := sbomInput{meta: testMeta, goVersion: goVersion, tinygoVersion: "0.42.0",
		files: []releaseFile{
			{name: "ctxgate-linux-amd64", data: data, kind: cdx.ComponentTypeApplication, deps: deps, embeds: []string{"ctxgate.wasm"}},
			{name: "ctxgate.wasm", data: []byte("\x00asm"), kind: cdx.ComponentTypeFile, tinygo: true},
		},
		licences: map[string]string{deps[0].key(): "BSD-3-Clause"}}
	var a, b bytes.Buffer
	if err := writeSBOM(&a, buildSBOM(in)); err != nil {
		t.Fatal(err)
	}
	writeSBOM(&b, buildSBOM(in))
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("the same release gave two different SBOMs")
	}

	var bom cdx.BOM
	if err := cdx.NewBOMDecoder(bytes.NewReader(a.Bytes()), cdx.BOMFileFormatJSON).Decode(&bom); err != nil {
		t.Fatal(err)
	}
	if bom.SpecVersion != cdx.SpecVersion1_6 || !strings.HasPrefix(bom.SerialNumber, "urn:uuid:") {
		t.Errorf("spec %v serial %q", bom.SpecVersion, bom.SerialNumber)
	}
	if c := bom.Metadata.Component; c.Name != "ctxgate" || c.Version != testMeta.version {
		t.Errorf("metadata component %s %s", c.Name, c.Version)
	}
	byRef := map[string]cdx.Component{}
	for _, c := range *bom.Components {
		byRef[c.BOMRef] = c
	}
	for _, m := range deps {
		c, ok := byRef[purl(m)]
		if !ok {
			t.Errorf("no component for %s", m.key())
			continue
		}
		if c.Version != m.Version || c.Type != cdx.ComponentTypeLibrary {
			t.Errorf("%s: %s %s", m.key(), c.Type, c.Version)
		}
		if m.Sum != "" && (c.Hashes == nil || (*c.Hashes)[0].Value != h1Hex(m.Sum)) {
			t.Errorf("%s: hashes %v, want the go.sum hash %s", m.key(), c.Hashes, m.Sum)
		}
	}
	if c := byRef[purl(deps[0])]; c.Licenses == nil || (*c.Licenses)[0].License.ID != "BSD-3-Clause" {
		t.Errorf("%s: licences %v", deps[0].key(), c.Licenses)
	}
	f := byRef["file:ctxgate-linux-amd64"]
	if f.Hashes == nil || (*f.Hashes)[0].Value != sha256Hex(data) {
		t.Errorf("the binary's component %+v", f)
	}
	deps2 := map[string][]string{}
	for _, d := range *bom.Dependencies {
		deps2[d.Ref] = *d.Dependencies
	}
	if on := deps2["file:ctxgate-linux-amd64"]; !slices.Contains(on, "file:ctxgate.wasm") || !slices.Contains(on, "pkg:golang/std@"+goVersion+"?type=module") {
		t.Errorf("the binary depends on %v: want the embedded module and the standard library", on)
	}
	if on := deps2["file:ctxgate.wasm"]; !slices.Contains(on, "pkg:golang/github.com/tinygo-org/tinygo@v0.42.0?type=module") {
		t.Errorf("the TinyGo module depends on %v: want TinyGo", on)
	}
}

func TestSPDXID(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"Apache License\n  Version 2.0, January 2004", "Apache-2.0"},
		{"Redistribution and use in source and binary forms, with or without\nmodification... * Neither the name of Google Inc.", "BSD-3-Clause"},
		{"Redistribution and use in source and binary forms ... Neither the name of the copyright holder nor the names of its contributors may be used", "BSD-3-Clause"},
		{"Redistribution and use in source and binary forms, with or without modification, are permitted", "BSD-2-Clause"},
		{"Permission is hereby granted, free of charge, to any person", "MIT"},
		{"covered by two different licenses: MIT and Apache.\n\nThe MIT License ... Apache License\n Version 2.0", "Apache-2.0 AND MIT"},
		{"Mozilla Public License Version 2.0\n==================================", "MPL-2.0"},
		{"Permission to use, copy, modify, and/or distribute this software for any purpose with or without fee", "ISC"},
		{"All rights reserved.", ""},
	} {
		if got := spdxID(tc.text); got != tc.want {
			t.Errorf("spdxID(%.40q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

// TestWriteProxy serves a small module as a version and checks the zip
// holds what the go command would take from a repository: not a nested
// module, not VCS metadata.
func TestWriteProxy(t *testing.T) {
	src := t.TempDir()
	for name, body := range map[string]string{
		"go.mod":            "module example.com/m\n\ngo 1.26\n",
		"m.go":              "package m\n",
		"wasm/m.wasm":       "\x00asm",
		"tool/go.mod":       "module example.com/m/tool\n",
		"tool/main.go":      "package main\n",
		".git/config":       "[core]\n",
		"testdata/req.json": "{}",
	} {
		p := filepath.Join(src, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o644)
	}
	out := t.TempDir()
	if err := writeProxy(src, "example.com/m", "v1.2.3", out); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(out, "example.com", "m", "@v")
	for _, f := range []string{"list", "v1.2.3.info", "v1.2.3.mod", "v1.2.3.zip"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("proxy lacks %s", f)
		}
	}
	z, err := zip.OpenReader(filepath.Join(dir, "v1.2.3.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	var names []string
	for _, f := range z.File {
		names = append(names, strings.TrimPrefix(f.Name, "example.com/m@v1.2.3/"))
	}
	got := strings.Join(names, " ")
	for _, want := range []string{"go.mod", "m.go", "wasm/m.wasm", "testdata/req.json"} {
		if !slices.Contains(names, want) {
			t.Errorf("zip lacks %s: %s", want, got)
		}
	}
	for _, not := range []string{"tool/main.go", ".git/config"} {
		if slices.Contains(names, not) {
			t.Errorf("zip holds %s: %s", not, got)
		}
	}
	if err := writeProxy(src, "example.com/m", "not-a-version", out); err == nil {
		t.Error("writeProxy took a version that is not semver")
	}
}
