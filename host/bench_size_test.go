package host

import (
	"context"
	"strconv"
	"strings"
	"testing"
)

// sizedRequest has n chunks of ~1.2 KB prose (20 chunks ≈ 25 KB, the size
// issue 10's targets name) with vector and BM25 scores.
func sizedRequest(n int) []byte {
	const prose = "Photosynthesis converts light energy into chemical energy stored in glucose. " +
		"In the light-dependent reactions, chlorophyll absorbs photons and water is split, releasing oxygen. " +
		"The Calvin cycle then fixes carbon dioxide into three-carbon sugars using ATP and NADPH. "
	var b strings.Builder
	b.WriteString(`{"query":"how do plants turn sunlight into food","chunks":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		s := strconv.Itoa(i)
		b.WriteString(`{"id":"c` + s + `","doc_id":"d` + strconv.Itoa(i/3) + `","text":"` + strings.Repeat(prose, 4)[i%50:] +
			`","scores":{"vector":0.` + strconv.Itoa(90-i%60) + `,"bm25":` + strconv.Itoa(20-i%15) + `.5}}`)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// BenchmarkEvaluateSized: native and every module × call path × deadline
// mode at 5, 20 and 100 chunks, so benchstat shows a regression on any path.
// Compare within one run; it asserts nothing about speed.
func BenchmarkEvaluateSized(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{5, 20, 100} {
		req := sizedRequest(n)
		b.Run(strconv.Itoa(n)+"/native", func(b *testing.B) {
			nat, err := NewNative(nil)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(req)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := nat.Evaluate(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, m := range realModules {
			for _, abi := range realABIs {
				for _, noInt := range []bool{false, true} {
					name := strconv.Itoa(n) + "/" + m.String() + "/" + abi.String()
					if noInt {
						name += "/no-interrupt"
					}
					b.Run(name, func(b *testing.B) {
						g := newRealGate(b, m, Options{PoolSize: 1, ABI: abi, Interrupt: checksIf(!noInt), Timeout: -1})
						b.SetBytes(int64(len(req)))
						b.ReportAllocs()
						for b.Loop() {
							if _, err := g.Evaluate(ctx, req); err != nil {
								b.Fatal(err)
							}
						}
					})
				}
			}
		}
	}
}

func TestSizedRequest(t *testing.T) {
	nat, err := NewNative(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{5, 20, 100} {
		req := sizedRequest(n)
		if _, err := nat.Evaluate(context.Background(), req); err != nil {
			t.Fatalf("%d chunks: %v", n, err)
		}
		if n == 20 && (len(req) < 20_000 || len(req) > 30_000) {
			t.Errorf("20 chunks are %d bytes, want about 25 KB", len(req))
		}
	}
}
