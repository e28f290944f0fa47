package host

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Inputs built to be slow, each within the default limits (gate/limits.go:
// 4 MiB request, 1000 chunks per list, 16 lists, 64 KiB per chunk, 2 MiB of
// chunk text, 4 KiB query, 4096 dimensions, depth 32, a value budget of a
// quarter of the request's bytes). They answer "what is the longest a
// bundled module can run on one call", the question behind running it
// without termination checks (Options.Interrupt, docs/performance.md). Run it with a few iterations:
//
//	go test ./host -run '^$' -bench WorstCase -benchtime 2x
//
// Each sub-benchmark reports ms per call and whether the call decided or
// answered an error (a limit error after parsing everything is a result
// too: the time is spent either way). It asserts nothing about speed.
func worstCases() []struct {
	name string
	op   string
	body []byte
} {
	words := func(n, seed int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString("w")
			b.WriteString(strconv.Itoa((i*7919 + seed) % 50000))
		}
		return b.String()
	}
	chunks := func(n int, text func(i int) string, extra string) string {
		var b strings.Builder
		b.WriteByte('[')
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"id":"c` + strconv.Itoa(i) + `","doc_id":"d` + strconv.Itoa(i) + `","text":"` + text(i) +
				`","scores":{"vector":0.` + strconv.Itoa(10+i%89) + `,"bm25":` + strconv.Itoa(i%30) + `.5}` + extra + `}`)
		}
		b.WriteByte(']')
		return b.String()
	}
	// 2 KiB of words per chunk, 1000 chunks: the chunk-text budget.
	prose := func(i int) string { return words(400, i)[:2040] }
	query := words(700, 1)[:4000]
	nested := strings.Repeat("[", 30) + "0" + strings.Repeat("]", 30)
	lists := make([]string, 16)
	for q := 0; q < len(lists); q++ {
		off := q
		lists[q] = chunks(1000, func(i int) string { return "w" + strconv.Itoa(i+off) }, "")
	}
	cjk := strings.Repeat("知识检索增强生成系统的置信度门控", 43)[:2040] // 3 bytes a rune
	emb := func(dims, seed int) string {
		b := make([]byte, 0, dims*10)
		b = append(b, '[')
		for i := range dims {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendFloat(b, float64((i*7+seed)%97)/97-0.5, 'f', 6, 64)
		}
		return string(append(b, ']'))
	}
	return []struct {
		name string
		op   string
		body []byte
	}{
		{"max chunks x 2 KiB prose, 4 KiB query", "evaluate",
			[]byte(`{"query":"` + query + `","chunks":` + chunks(1000, prose, "") + `}`)},
		{"16 lists x 1000 chunks (merge)", "evaluate",
			[]byte(`{"query":"w1 w2 w3","results_per_query":[` + strings.Join(lists, ",") + `]}`)},
		{"max chunks x 2 KiB CJK", "evaluate",
			[]byte(`{"query":"知识检索的置信度","chunks":` + chunks(1000, func(int) string { return cjk }, "") + `}`)},
		{"1000 chunks of \\u escapes (4 MiB)", "evaluate",
			[]byte(`{"query":"é","chunks":` + chunks(1000, func(int) string { return strings.Repeat(`\u00e9`, 680) }, "") + `}`)},
		{"1000 chunks of surrogate pairs", "evaluate",
			[]byte(`{"query":"😀","chunks":` + chunks(1000, func(int) string { return strings.Repeat(`\ud83d\ude00`, 340) }, "") + `}`)},
		{"100 chunks x 4096-dim embeddings", "evaluate",
			[]byte(`{"query":"w1","query_embedding":` + emb(4096, 0) + `,"chunks":` +
				chunks(100, func(i int) string { return "w1 w2" }, `,"embedding":`+emb(4096, 1)) + `}`)},
		{"1 Mi - 64 numbers in metadata (value budget)", "evaluate",
			[]byte(`{"query":"q","chunks":[{"text":"q","metadata":[` + strings.Repeat("0,", 1<<20-64) + `0]}]}`)},
		{"4 MiB of zeros (over the value budget)", "evaluate",
			[]byte(`{"query":"q","query_embedding":[` + strings.Repeat("0,", (4<<20-64)/2) + `0]}`)},
		{"depth-30 arrays in metadata (4 MiB)", "evaluate",
			[]byte(`{"query":"q","chunks":[{"text":"q","metadata":[` + strings.Repeat(nested+",", (4<<20-100)/(len(nested)+1)) + `0]}]}`)},
		{"1 Mi short strings in metadata", "evaluate",
			[]byte(`{"query":"q","chunks":[{"text":"q","metadata":[` + strings.Repeat(`"",`, (4<<20-100)/3-10) + `""]}]}`)},
		{"3 MiB answer, 60k cited sentences", "validate",
			worstAnswer(3 << 20)},
	}
}

func BenchmarkWorstCase(b *testing.B) {
	ctx := context.Background()
	for _, c := range worstCases() {
		for _, noInt := range []bool{true, false} {
			name := c.name + "/checks"
			if noInt {
				name = c.name + "/no-interrupt"
			}
			b.Run(name, func(b *testing.B) {
				g := newRealGate(b, ModuleTinyGo, Options{PoolSize: 1, Interrupt: checksIf(!noInt), Timeout: 5 * time.Minute})
				var outcome string
				var worst time.Duration
				for range b.N {
					start := time.Now()
					_, err := g.call(ctx, c.op, c.body)
					worst = max(worst, time.Since(start))
					var ge *GateError
					switch {
					case err == nil:
						outcome = "decided"
					case errors.As(err, &ge):
						outcome = ge.Code
					default:
						b.Fatalf("%d bytes: %v", len(c.body), firstLine(err))
					}
				}
				b.ReportMetric(float64(worst.Microseconds())/1e3, "worst-ms")
				b.Logf("%d bytes: %s", len(c.body), outcome)
			})
		}
	}
}

// BenchmarkWorstCaseAnswer times the validate export on the worst-case
// answer (two sentences repeated, one cited, one not) at growing sizes,
// natively and through the TinyGo module without termination checks, so
// that the time's growth with the answer's size shows: it should stay
// linear (docs/performance.md). Run it once per size:
//
//	go test ./host -run '^$' -bench WorstCaseAnswer -benchtime 1x
func BenchmarkWorstCaseAnswer(b *testing.B) {
	ctx := context.Background()
	for _, size := range []int{144 << 10, 288 << 10, 576 << 10, 1152 << 10, 3 << 20} {
		body := worstAnswer(size)
		b.Run(strconv.Itoa(size>>10)+"_KiB/native", func(b *testing.B) {
			n, err := NewNative(nil)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if _, err := n.Validate(ctx, body); err != nil {
					b.Fatal(firstLine(err))
				}
			}
		})
		b.Run(strconv.Itoa(size>>10)+"_KiB/tinygo-no-interrupt", func(b *testing.B) {
			g := newRealGate(b, ModuleTinyGo, Options{PoolSize: 1, Interrupt: InterruptNever, Timeout: 5 * time.Minute})
			if _, err := g.call(ctx, "describe", nil); err != nil { // instantiate outside the timing
				b.Fatal(firstLine(err))
			}
			b.ResetTimer()
			for range b.N {
				if _, err := g.call(ctx, "validate", body); err != nil {
					b.Fatal(firstLine(err))
				}
			}
		})
	}
}

// worstAnswer is the validate input of BenchmarkWorstCase's 3 MiB answer cut
// to size bytes of answer.
func worstAnswer(size int) []byte {
	answer := strings.Repeat("The key rotates every day [S1]. Nothing else is said here. ", size/59+1)[:size]
	return []byte(`{"answer":"` + answer + `","tags":["S1","S2"],"query":"q"}`)
}

func TestWorstCasesWithinLimits(t *testing.T) {
	// Every input is under the default max_request_bytes, so the time it
	// takes is a time the default limits allow.
	for _, c := range worstCases() {
		if len(c.body) > 4<<20 {
			t.Errorf("%s: %d bytes, over the default 4 MiB", c.name, len(c.body))
		}
	}
}
