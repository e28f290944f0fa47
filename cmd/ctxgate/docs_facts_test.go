package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/host"
)

// Sizes and hashes the docs state are what the tree has. Where a doc says
// them:
//
//   - `<!-- size:PATH -->392,183 bytes (383 KiB)<!-- /size -->`: the size of
//     the committed file PATH, in the units the text uses (bytes or B with
//     thousands commas, KiB rounded, MiB to one decimal);
//   - `module tinygo ctxgate.wasm    392183 bytes   sha256 aebce33d...`
//     (ctxgate --version's lines): the embedded module's size and a prefix
//     of its sha256;
//   - `"name":"default","version":"4","sha256":"..."` (a decision's policy)
//     and `default 4 (sha256 `8dfa8cc902be`)` (calibrate's report): for a
//     preset at its current version, a prefix of its sha256.
//
// `go test ./cmd/ctxgate -run TestDocFacts -update` rewrites them all.
func TestDocFacts(t *testing.T) {
	root := filepath.Join("..", "..")
	var docs []string
	for _, pattern := range []string{"*.md", "docs/*.md", "host/README.md", "packages/*/README.md", "guest/*/README.md", "examples/*/README.md"} {
		m, _ := filepath.Glob(filepath.Join(root, pattern))
		docs = append(docs, m...)
	}
	facts := docFacts(t)
	checked := 0
	for _, path := range docs {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		doc := strings.TrimPrefix(filepath.ToSlash(path), "../../")
		out := string(b)
		for _, r := range facts {
			out = r.re.ReplaceAllStringFunc(out, func(m string) string {
				want, ok := r.want(r.re.FindStringSubmatch(m))
				if !ok {
					return m
				}
				checked++
				if want != m && !*update {
					t.Errorf("%s: %q is stale: the tree has %q (go test ./cmd/ctxgate -run TestDocFacts -update)", doc, m, want)
				}
				return want
			})
		}
		if *update && out != string(b) {
			if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("rewrote %s", doc)
		}
	}
	if checked < 10 {
		t.Errorf("only %d facts found in the docs: the markers are gone?", checked)
	}
}

// docFact is one kind of statement: the text it matches, and that text as
// the tree makes it (ok false: not a statement this rule checks).
type docFact struct {
	re   *regexp.Regexp
	want func(m []string) (string, bool)
}

func docFacts(t *testing.T) []docFact {
	sizes := map[string]int{}
	for _, p := range []string{"host/wasm/ctxgate.wasm", "host/wasm/ctxgate-go.wasm", "guest/envoy/envoy-filter.wasm"} {
		st, err := os.Stat(filepath.Join("..", "..", p))
		if err != nil {
			t.Fatal(err)
		}
		sizes[p] = int(st.Size())
	}
	modules := map[string]host.ModuleInfo{}
	for _, m := range host.Modules() {
		modules[m.File] = m
	}
	list, err := presets()
	if err != nil {
		t.Fatal(err)
	}
	policySHA := map[string]string{} // name@version -> sha256
	for _, p := range list {
		policySHA[p.Name+"@"+p.Version] = p.SHA256
	}
	// prefix keeps a hash as long as the doc had it (a short prefix stays short).
	prefix := func(full, had string) string { return full[:min(len(had), len(full))] }
	number := regexp.MustCompile(`(\d{1,3}(?:,\d{3})+|\d+)( bytes| B)|(\d+) KiB|(\d+\.\d) MiB`)
	return []docFact{
		{
			re: regexp.MustCompile(`<!-- size:([^ ]+) -->(.*?)<!-- /size -->`),
			want: func(m []string) (string, bool) {
				size, ok := sizes[m[1]]
				if !ok {
					t.Errorf("size marker for %s: not a committed module", m[1])
					return m[0], false
				}
				if !number.MatchString(m[2]) {
					t.Errorf("size marker for %s: %q has no size in it", m[1], m[2])
				}
				text := number.ReplaceAllStringFunc(m[2], func(n string) string {
					switch s := number.FindStringSubmatch(n); {
					case s[2] != "":
						return thousands(size) + s[2]
					case s[3] != "":
						return strconv.Itoa((size+512)/1024) + " KiB"
					default:
						return fmt.Sprintf("%.1f MiB", float64(size)/(1<<20))
					}
				})
				return "<!-- size:" + m[1] + " -->" + text + "<!-- /size -->", true
			},
		},
		{
			re: regexp.MustCompile(`(module (?:tinygo|go) +)(\S+\.wasm)( +)(\d+)( bytes +sha256 )([0-9a-f]+)`),
			want: func(m []string) (string, bool) {
				mod, ok := modules[m[2]]
				if !ok || !mod.Built {
					return m[0], false
				}
				return m[1] + m[2] + m[3] + strconv.Itoa(mod.Size) + m[5] + prefix(mod.SHA256, m[6]), true
			},
		},
		{
			re: regexp.MustCompile(`("name":"([a-z-]+)","version":"([^"]+)","sha256":")([0-9a-f]{12,64})`),
			want: func(m []string) (string, bool) {
				sum, ok := policySHA[m[2]+"@"+m[3]]
				return m[1] + prefix(sum, m[4]), ok
			},
		},
		{
			re: regexp.MustCompile("(([a-z-]+) ([0-9][^ ]*) \\(sha256 `)([0-9a-f]{12,64})`"),
			want: func(m []string) (string, bool) {
				sum, ok := policySHA[m[2]+"@"+m[3]]
				return m[1] + prefix(sum, m[4]) + "`", ok
			},
		},
	}
}

// thousands writes n with a comma every three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
