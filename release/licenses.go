package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// licenceFileName matches the licence and notice files a module ships at its root.
var licenceFileName = regexp.MustCompile(`(?i)^(licen[cs]e|copying|notice)([.-].*)?$`)

// licenceTexts are a directory's licence and notice files, by name.
func licenceTexts(dir string) (map[string]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, e := range entries {
		if e.IsDir() || !licenceFileName.MatchString(e.Name()) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out[e.Name()] = string(b)
	}
	return out, nil
}

// spdxID names the licence of a licence text by its defining phrases, or ""
// when it is none of the few licences Go modules here use. It is a reading
// aid for the SBOM, not a legal determination: the texts themselves go into
// THIRD_PARTY_LICENSES.txt.
func spdxID(text string) string {
	t := strings.Join(strings.Fields(text), " ")
	has := func(s ...string) bool {
		for _, x := range s {
			if !strings.Contains(t, x) {
				return false
			}
		}
		return true
	}
	switch {
	case has("Apache License", "Version 2.0", "MIT License"), has("Apache License", "Version 2.0", "Permission is hereby granted, free of charge"):
		return "Apache-2.0 AND MIT" // e.g. yaml: MIT for the libyaml port, Apache for the rest
	case has("Apache License", "Version 2.0"):
		return "Apache-2.0"
	case has("Mozilla Public License Version 2.0"):
		return "MPL-2.0"
	case has("Redistribution and use in source and binary forms", "Neither the name"),
		has("Redistribution and use in source and binary forms", "names of its contributors may be used"):
		return "BSD-3-Clause"
	case has("Redistribution and use in source and binary forms"):
		return "BSD-2-Clause"
	case has("Permission is hereby granted, free of charge"):
		return "MIT"
	case has("Permission to use, copy, modify, and/or distribute this software for any purpose"):
		return "ISC"
	}
	return ""
}

// moduleLicence is the SPDX id of a module's LICENSE/COPYING file ("" when
// unknown) and its licence and notice texts.
func moduleLicence(dir string) (string, map[string]string, error) {
	texts, err := licenceTexts(dir)
	if err != nil {
		return "", nil, err
	}
	names := make([]string, 0, len(texts))
	for n := range texts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !strings.HasPrefix(strings.ToLower(n), "notice") {
			if id := spdxID(texts[n]); id != "" {
				return id, texts, nil
			}
		}
	}
	return "", texts, nil
}

// noticeSource is one entry of THIRD_PARTY_LICENSES.txt.
type noticeSource struct {
	title string // e.g. "github.com/tetratelabs/wazero v1.12.0"
	dir   string // its licence files are read from here
	files []string
}

// writeThirdPartyLicences writes every source's licence and notice texts,
// failing on a source that has none: a release must not ship code whose
// licence it cannot reproduce.
func writeThirdPartyLicences(path string, sources []noticeSource) error {
	var b strings.Builder
	b.WriteString("Licences and notices of the third-party code in the ctxgate release binaries and\n" +
		"Wasm modules (see NOTICE and the SBOM, ctxgate.cdx.json). Written by make dist.\n")
	for _, s := range sources {
		texts := map[string]string{}
		if len(s.files) > 0 {
			for _, f := range s.files {
				data, err := os.ReadFile(filepath.Join(s.dir, f))
				if err != nil {
					return fmt.Errorf("%s: %w", s.title, err)
				}
				texts[f] = string(data)
			}
		} else {
			var err error
			if texts, err = licenceTexts(s.dir); err != nil {
				return fmt.Errorf("%s: %w", s.title, err)
			}
		}
		if len(texts) == 0 {
			return fmt.Errorf("%s: no licence file in %s", s.title, s.dir)
		}
		names := make([]string, 0, len(texts))
		for n := range texts {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(&b, "\n%s\n== %s: %s\n%s\n\n", strings.Repeat("=", 78), s.title, n, strings.Repeat("=", 78))
			b.WriteString(strings.TrimRight(texts[n], "\n") + "\n")
		}
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
