package wasmbench

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ctxgate/ctxgate/gate/bundle"
)

var vectorDir = filepath.Join("..", "..", "testdata", "vector")

// native is what the guest prints, computed by the native build.
func native(t testing.TB, b, trustJSON []byte, mode string) string {
	m, err := bundle.ParseMode(mode)
	if err != nil {
		return "error " + err.Error()
	}
	trust, err := bundle.ParseTrust(trustJSON)
	if err != nil {
		return "error " + err.Error()
	}
	p, err := bundle.Open(b, trust, m)
	if err != nil {
		return "error " + err.Error()
	}
	sum := sha256.Sum256(p)
	return "ok " + hex.EncodeToString(sum[:])
}

// cases writes the vector bundle and tampered variants into a directory the
// guests see as /data.
func cases(t *testing.T) (dir string, names []string) {
	good := mustRead(t, filepath.Join(vectorDir, "bundle.json"))
	policy := mustRead(t, filepath.Join(vectorDir, "policy.json"))
	flip := func(at []byte, off int) []byte {
		c := bytes.Clone(good)
		i := bytes.Index(c, at) + off
		c[i] ^= 1
		return c
	}
	files := map[string][]byte{
		"good.json":            good,
		"policy-flipped.json":  flip([]byte(`"inject":0.7`), 10),
		"ed25519-flipped.json": flip([]byte(`"sig":"`), 30),
		"mldsa-flipped.json":   flip([]byte(`"alg":"ml-dsa-65"`), 100),
		"unsigned.json":        policy,
		"trust.pub":            mustRead(t, filepath.Join(vectorDir, "trust.pub")),
		"other.pub": []byte(`{"alg":"ed25519","key_id":"` + bundle.KeyID(bundle.Ed25519, make([]byte, 32)) +
			`","public":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}`),
	}
	dir = t.TempDir()
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	return dir, names
}

// TestSameVerdictInWasm: every bundle gets byte-for-byte the same verdict
// (the policy's sha256, or the same error text) natively, in the standard-Go
// module and in the TinyGo module.
func TestSameVerdictInWasm(t *testing.T) {
	dir, _ := cases(t)
	type c struct{ bundle, trust, mode, want string }
	var table []c
	for _, b := range []string{"good.json", "policy-flipped.json", "ed25519-flipped.json", "mldsa-flipped.json", "unsigned.json"} {
		for _, mode := range []string{"hybrid", "ed25519", "ml-dsa-65"} {
			table = append(table, c{b, "trust.pub", mode, ""})
		}
	}
	table = append(table, c{"good.json", "other.pub", "hybrid", ""}, c{"good.json", "trust.pub", "rsa", ""})
	oks := 0
	for i := range table {
		table[i].want = native(t, mustRead(t, filepath.Join(dir, table[i].bundle)), mustRead(t, filepath.Join(dir, table[i].trust)), table[i].mode)
		if table[i].want[:2] == "ok" {
			oks++
		}
	}
	// The table must hold both outcomes, or it proves nothing.
	if oks != 5 || oks == len(table) {
		t.Fatalf("%d of %d cases open natively; want the good bundle in 3 modes and the ed25519/ml-dsa flips in the other scheme's mode", oks, len(table))
	}
	for _, tool := range []string{"go", "tinygo"} {
		t.Run(tool, func(t *testing.T) {
			wasm := build(t, module{tool, "./guest"})
			for _, tc := range table {
				got := verdict(run(t, wasm, dir, tc.bundle, tc.trust, tc.mode, 1))
				if got != tc.want {
					t.Errorf("%s %s %s:\n wasm   %s\n native %s", tc.bundle, tc.trust, tc.mode, got, tc.want)
				}
			}
		})
	}
}

// BenchmarkOpen reports the time of one Open of the hybrid test-vector
// bundle natively and inside each module ("ns/open", measured by the guest
// with the sandbox clock, so instantiation is not counted), and the module
// sizes. Compare columns within one run; the machine is shared and noisy.
//
//	go test ./gate/bundle/internal/wasmbench -run '^$' -bench Open -benchtime 200x
func BenchmarkOpen(b *testing.B) {
	good := mustRead(b, filepath.Join(vectorDir, "bundle.json"))
	trustJSON := mustRead(b, filepath.Join(vectorDir, "trust.pub"))
	trust, err := bundle.ParseTrust(trustJSON)
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []string{"hybrid", "ed25519", "ml-dsa-65"} {
		m, _ := bundle.ParseMode(mode)
		b.Run("native/"+mode, func(b *testing.B) {
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if _, err := bundle.Open(good, trust, m); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N), "ns/open")
		})
		for _, tool := range []string{"go", "tinygo"} {
			b.Run(tool+"-wasm/"+mode, func(b *testing.B) {
				wasm := build(b, module{tool, "./guest"})
				base := build(b, module{tool, "./baseline"})
				b.ResetTimer()
				line := run(b, wasm, vectorDir, "bundle.json", "trust.pub", mode, b.N)
				b.ReportMetric(nsPerOp(b, line), "ns/open")
				// The baseline only parses and canonicalizes: the rest of
				// ns/open is signature verification.
				b.ReportMetric(nsPerOp(b, run(b, base, vectorDir, "bundle.json", "trust.pub", mode, b.N)), "parse-ns/open")
				b.ReportMetric(float64(len(wasm)), "module-bytes")
				b.ReportMetric(float64(len(wasm)-len(base)), "bundle-bytes")
			})
		}
	}
}
