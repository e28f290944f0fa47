package main

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
)

// releaseFile is one file of the release the SBOM describes.
type releaseFile struct {
	name string // as in dist/, e.g. ctxgate-linux-amd64
	data []byte
	kind cdx.ComponentType
	deps []goModule // the Go modules compiled into it
	// embeds are the names of other release files it carries (the binaries
	// embed the Extism modules).
	embeds []string
	// tinygo is true for a module TinyGo compiled (its runtime is in it).
	tinygo bool
}

// sbomInput is everything the SBOM says.
type sbomInput struct {
	meta
	goVersion     string // the toolchain of the binaries and the Go-built module
	tinygoVersion string // e.g. 0.42.0
	files         []releaseFile
	licences      map[string]string // module key -> SPDX id, "" unknown
}

func purl(m goModule) string {
	return "pkg:golang/" + m.Path + "@" + m.Version + "?type=module"
}

// h1Hex is a go.sum hash (h1: base64 SHA-256 of the module's file list) in
// hex, as CycloneDX records hashes; "" when there is none.
func h1Hex(sum string) string {
	b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(sum, "h1:"))
	if err != nil || !strings.HasPrefix(sum, "h1:") || len(b) != sha256.Size {
		return ""
	}
	return hex.EncodeToString(b)
}

// spdx is an SPDX licence id, or an expression of several ("A AND B").
func spdx(id string) *cdx.Licenses {
	switch {
	case id == "":
		return nil
	case strings.Contains(id, " "):
		return &cdx.Licenses{{Expression: id}}
	}
	return &cdx.Licenses{{License: &cdx.License{ID: id}}}
}

// buildSBOM is a CycloneDX 1.6 document: the release (ctxgate) made of its
// files, each file depending on the Go modules compiled into it, the Go
// standard library and TinyGo's runtime where they apply. Everything in it
// comes from the inputs, so the same release gives the same bytes.
func buildSBOM(in sbomInput) *cdx.BOM {
	bom := cdx.NewBOM()
	main := goModule{Path: "github.com/ctxgate/ctxgate", Version: in.version}
	bom.Metadata = &cdx.Metadata{
		Timestamp: in.created.UTC().Format(time.RFC3339),
		Tools: &cdx.ToolsChoice{Components: &[]cdx.Component{{
			Type: cdx.ComponentTypeApplication, Name: "ctxgate release (release/ in the ctxgate repository)",
			Description: "make dist: SBOM from the binaries' build info and the go command's package lists",
		}}},
		Component: &cdx.Component{
			BOMRef: purl(main), Type: cdx.ComponentTypeApplication, Name: "ctxgate", Version: in.version,
			Description: "A deterministic retrieval-confidence gate for RAG",
			PackageURL:  purl(main), Licenses: spdx("Apache-2.0"),
		},
	}
	if in.source != "" {
		bom.Metadata.Component.ExternalReferences = &[]cdx.ExternalReference{{Type: cdx.ERTypeVCS, URL: in.source}}
	}

	var comps []cdx.Component
	var deps []cdx.Dependency
	seen := map[string]bool{}
	addModule := func(m goModule) string {
		ref := purl(m)
		if !seen[ref] {
			seen[ref] = true
			c := cdx.Component{BOMRef: ref, Type: cdx.ComponentTypeLibrary, Name: m.Path, Version: m.Version,
				PackageURL: ref, Licenses: spdx(in.licences[m.key()])}
			if h := h1Hex(m.Sum); h != "" {
				c.Hashes = &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: h}}
			}
			comps = append(comps, c)
		}
		return ref
	}
	addPlatform := func(ref, name, version, licence string) string {
		if !seen[ref] {
			seen[ref] = true
			comps = append(comps, cdx.Component{BOMRef: ref, Type: cdx.ComponentTypeLibrary, Name: name,
				Version: version, PackageURL: ref, Licenses: spdx(licence)})
		}
		return ref
	}
	fileRef := func(name string) string { return "file:" + name }

	var top []string
	for _, f := range in.files {
		ref := fileRef(f.name)
		top = append(top, ref)
		comps = append(comps, cdx.Component{BOMRef: ref, Type: f.kind, Name: f.name, Version: in.version,
			Hashes: &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: sha256Hex(f.data)}}})
		var on []string
		for _, m := range f.deps {
			on = append(on, addModule(m))
		}
		switch {
		case f.tinygo:
			on = append(on, addPlatform("pkg:golang/github.com/tinygo-org/tinygo@v"+in.tinygoVersion+"?type=module",
				"github.com/tinygo-org/tinygo", "v"+in.tinygoVersion, "BSD-3-Clause"))
		case in.goVersion != "":
			on = append(on, addPlatform("pkg:golang/std@"+in.goVersion+"?type=module", "std", in.goVersion, "BSD-3-Clause"))
		}
		for _, e := range f.embeds {
			on = append(on, fileRef(e))
		}
		sort.Strings(on)
		deps = append(deps, cdx.Dependency{Ref: ref, Dependencies: &on})
	}
	sort.Strings(top)
	deps = append(deps, cdx.Dependency{Ref: purl(main), Dependencies: &top})
	sort.Slice(comps, func(i, j int) bool { return comps[i].BOMRef < comps[j].BOMRef })
	sort.Slice(deps, func(i, j int) bool { return deps[i].Ref < deps[j].Ref })
	bom.Components = &comps
	bom.Dependencies = &deps

	// A serial number derived from the content, not random: reproducible.
	h := sha256.New()
	for _, c := range comps {
		fmt.Fprintln(h, c.BOMRef)
		if c.Hashes != nil {
			fmt.Fprintln(h, (*c.Hashes)[0].Value)
		}
	}
	fmt.Fprintln(h, in.version, in.revision)
	s := h.Sum(nil)
	s[6] = s[6]&0x0f | 0x50 // UUID version 5 layout (name-based, SHA)
	s[8] = s[8]&0x3f | 0x80
	bom.SerialNumber = fmt.Sprintf("urn:uuid:%x-%x-%x-%x-%x", s[0:4], s[4:6], s[6:8], s[8:10], s[10:16])
	return bom
}

func writeSBOM(w io.Writer, bom *cdx.BOM) error {
	enc := cdx.NewBOMEncoder(w, cdx.BOMFileFormatJSON)
	enc.SetPretty(true)
	return enc.EncodeVersion(bom, cdx.SpecVersion1_6)
}
