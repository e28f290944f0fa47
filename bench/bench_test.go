package bench

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/host"
)

func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	for _, tc := range []struct {
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{nil, 50, 0},
		{ms(7), 99, 7 * time.Millisecond},
		{ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 99, 10 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 0, 1 * time.Millisecond},
	} {
		if got := Percentile(tc.sorted, tc.p); got != tc.want {
			t.Errorf("Percentile(%v, %v) = %v, want %v", tc.sorted, tc.p, got, tc.want)
		}
	}
}

func TestSplice(t *testing.T) {
	gen := "table\n"
	block := BeginMarker + "\n" + gen + EndMarker
	for _, tc := range []struct{ doc, want string }{
		{"", block + "\n"},
		{"# Performance\n\nhand", "# Performance\n\nhand\n" + block + "\n"},
		{"head\n" + BeginMarker + "\nold\n" + EndMarker + "\n## Decisions\nkept\n", "head\n" + block + "\n## Decisions\nkept\n"},
	} {
		if got := Splice(tc.doc, gen); got != tc.want {
			t.Errorf("Splice(%q) = %q, want %q", tc.doc, got, tc.want)
		}
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{Micros(8400 * time.Nanosecond), "8.4 µs"},
		{Micros(152 * time.Microsecond), "152 µs"},
		{Millis(1234 * time.Microsecond), "1.23 ms"},
		{Ratio(3*time.Millisecond, 2*time.Millisecond), "×1.5"},
		{Ratio(time.Second, 0), "-"},
		{KB(25_400), "25.4 KB"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
	tab := Table{Head: []string{"a", "b"}}
	tab.Add("1", "2")
	if got, want := tab.String(), "| a | b |\n| --- | --- |\n| 1 | 2 |\n"; got != want {
		t.Errorf("table %q, want %q", got, want)
	}
}

// Every workload request is one the gate decides: with the DL19 data when it
// is beside the repository, and always with the synthetic fallback.
func TestWorkloads(t *testing.T) {
	var sets []Workload
	for _, n := range []int{5, 20, 100} {
		sets = append(sets, Synthetic("synthetic", n, 1), Synthetic("synthetic chunks", n, 4))
	}
	d, err := LoadDL19(filepath.Join("..", "..", "shared", "data"))
	switch {
	case errors.Is(err, ErrNoData):
		t.Log("no DL19 data; synthetic workloads only")
	case err != nil:
		t.Fatal(err)
	default:
		if len(d.Queries) != 43 {
			t.Errorf("%d DL19 queries, want 43", len(d.Queries))
		}
		for _, n := range []int{5, 20, 100} {
			sets = append(sets, d.Workload("passages", n, 1), d.Workload("chunks", n, 4))
		}
		if w := d.Workload("chunks", 20, 4); w.MeanBytes() < 20_000 || w.MeanBytes() > 40_000 {
			t.Errorf("20 DL19 chunks average %d bytes, want about 30 KB", w.MeanBytes())
		}
	}
	for _, w := range sets {
		if len(w.Requests) == 0 {
			t.Fatalf("%s/%d: no requests", w.Name, w.Chunks)
		}
		for i, r := range w.Requests {
			req, err := gate.DecodeRequest(r, nil)
			if err != nil {
				t.Fatalf("%s/%d request %d: %v", w.Name, w.Chunks, i, err)
			}
			if len(req.Chunks) != w.Chunks || !req.Chunks[0].Scores.HasVector || strings.TrimSpace(req.Chunks[0].Text) == "" {
				t.Fatalf("%s/%d request %d: %d chunks, first %+v", w.Name, w.Chunks, i, len(req.Chunks), req.Chunks[0].Scores)
			}
		}
	}
}

// The measuring loop runs every subject on every sample and reports an
// ordered distribution; a failing subject is named.
func TestMeasureLatency(t *testing.T) {
	ctx := context.Background()
	native, err := host.NewNative(nil)
	if err != nil {
		t.Fatal(err)
	}
	w := Synthetic("s", 5, 1)
	ls, err := MeasureLatency(ctx, []Subject{{"a", native}, {"b", native}}, w, 20)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range ls {
		if l.Samples != 20 || l.P50 <= 0 || l.P99 < l.P50 {
			t.Errorf("%+v", l)
		}
	}
	bad := Workload{Name: "bad", Requests: [][]byte{[]byte(`{`)}}
	_, err = MeasureLatency(ctx, []Subject{{"a", native}}, bad, 1)
	var se *SubjectError
	if !errors.As(err, &se) || se.Subject != "a" || se.Workload != "bad" {
		t.Errorf("bad request: %v", err)
	}
	if r, err := Throughput(ctx, native, w, 2, 50*time.Millisecond); err != nil || r <= 0 {
		t.Errorf("Throughput = %v, %v", r, err)
	}
}
