// Command release writes and checks ctxgate's release artifacts. It is a
// module of its own so that its dependencies (go-containerregistry for the
// OCI images, cyclonedx-go for the SBOM, x/mod for module zips) never enter
// the graph of programs that import ctxgate.
//
//	go run . dist -root .. -dist ../dist -version v0.1.0 ...  (scripts/dist.sh)
//	go run . verify -dist ../dist -version v0.1.0
//	go run . modzip -dir SRC -module M -version V -out PROXY  (scripts/test-install.sh)
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	fs := flag.NewFlagSet("release "+os.Args[1], flag.ExitOnError)
	var err error
	switch os.Args[1] {
	case "dist":
		var c distConfig
		var created int64
		var debs string
		fs.StringVar(&c.root, "root", "..", "the repository `DIR`")
		fs.StringVar(&c.dist, "dist", "../dist", "dist `DIR`, holding the binaries dist.sh built")
		fs.StringVar(&c.version, "version", "", "release `VERSION`, e.g. v0.1.0")
		fs.StringVar(&c.revision, "revision", "", "the git commit")
		fs.Int64Var(&created, "created", 0, "every timestamp, in Unix `SECONDS` (the commit's time)")
		fs.StringVar(&c.source, "source", "", "repository `URL` for the images' and SBOM's metadata")
		fs.StringVar(&c.tinygoVersion, "tinygo", "", "TinyGo `VERSION` the modules were built with, e.g. 0.42.0")
		fs.StringVar(&c.tinygoDir, "tinygo-dir", "", "TinyGo's source `DIR` (its LICENSE)")
		fs.StringVar(&c.caBundle, "ca-bundle", "/etc/ssl/certs/ca-certificates.crt", "CA bundle `FILE` for the serve image (\"\": none)")
		fs.StringVar(&debs, "debian-docs", "/usr/share/doc/wasi-libc,/usr/share/doc/libclang-rt-19-dev-wasm32",
			"comma-separated `DIRS` whose copyright files cover libraries linked into the TinyGo modules")
		fs.Parse(os.Args[2:])
		if c.version == "" || created == 0 || c.tinygoVersion == "" {
			fmt.Fprintln(os.Stderr, "release dist: -version, -created and -tinygo are required")
			os.Exit(2)
		}
		c.created = time.Unix(created, 0).UTC()
		if debs != "" {
			c.debianDocs = strings.Split(debs, ",")
		}
		err = makeDist(c)
	case "verify":
		dist := fs.String("dist", "../dist", "dist `DIR`")
		version := fs.String("version", "", "release `VERSION` the images are tagged with")
		fs.Parse(os.Args[2:])
		err = verifyDist(*dist, *version)
	case "modzip":
		dir := fs.String("dir", "", "module source `DIR`")
		mod := fs.String("module", "", "module `PATH`")
		version := fs.String("version", "", "the `VERSION` to serve it as")
		out := fs.String("out", "", "proxy `DIR` to write")
		fs.Parse(os.Args[2:])
		err = writeProxy(*dir, *mod, *version, *out)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "release %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: release dist|verify|modzip [flags] (release -h)")
	os.Exit(2)
}
