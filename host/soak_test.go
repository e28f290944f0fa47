package host

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"
)

// The soak: many evaluations through one pooled set of TinyGo instances, good
// and bad inputs mixed, every answer compared with native's bytes. It shows
// that memory is flat (the host heap and every instance's linear memory stop
// growing once each input has been seen) and that nothing crashes: no trap,
// no timeout, no instance replaced. 10k calls in `go test`; CTXGATE_SOAK=1
// runs 100k (the figure in docs/security.md). CTXGATE_SOAK=N runs N.

type soakInput struct {
	name     string
	validate bool
	body     []byte
	want     []byte // native's output, or its error JSON
	wantErr  bool
}

func soakInputs(t *testing.T, native *Native) []soakInput {
	t.Helper()
	ctx := context.Background()
	var ins []soakInput
	add := func(name string, validate bool, body []byte) {
		call := native.Evaluate
		if validate {
			call = native.Validate
		}
		out, err := call(ctx, body)
		in := soakInput{name: name, validate: validate, body: body, want: out}
		if err != nil {
			var ge *GateError
			if !errors.As(err, &ge) {
				t.Fatalf("%s natively: %v", name, err)
			}
			in.want, in.wantErr = ge.JSON, true
		}
		ins = append(ins, in)
	}
	paths, _ := filepath.Glob(filepath.Join("..", "testdata", "requests", "default", "*.json"))
	sort.Strings(paths)
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		add(filepath.Base(p), false, b)
	}
	add("sample", false, []byte(sampleRequest))
	add("embeddings 384x5", false, embeddingRequest(384, 5))
	for _, c := range badValueCases {
		add(c.name, false, []byte(c.body))
	}
	for _, c := range limitCases() {
		add("default policy, "+c.name, false, []byte(c.body))
	}
	add("answer", true, []byte(`{"answer":"Rotate the key [S1]. It expires yearly.","tags":["S1","S2"]}`))
	add("soft refusal", true, []byte(`{"answer":"I don't have enough information to answer this from the provided sources.","query":"q"}`))
	add("bad answer", true, []byte(`{"answer":"x","tags":["S0"]}`))
	return ins
}

// soakPoint is one sample of memory.
type soakPoint struct {
	calls      int
	heap       uint64   // host HeapAlloc after GC
	guestPages []uint32 // each live instance's linear memory, in 64 KiB pages
	goroutines int
}

// guestPages reads every live instance's memory by taking all of them from
// the pool at once (no call may run meanwhile).
func guestPages(t *testing.T, g *Gate) []uint32 {
	ctx := context.Background()
	n := g.Stats().Live
	var held []instance
	var pages []uint32
	for range n {
		in, err := g.pool.acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, in)
		if r, ok := in.(*rawInstance); ok {
			pages = append(pages, r.mem.Size()/pageBytes)
		}
	}
	for _, in := range held {
		g.pool.release(in, true)
	}
	sort.Slice(pages, func(i, j int) bool { return pages[i] < pages[j] })
	return pages
}

func TestSoak(t *testing.T) {
	total := 10_000
	switch v := os.Getenv("CTXGATE_SOAK"); v {
	case "":
	case "1":
		total = 100_000
	default:
		n, err := strconv.Atoi(v)
		if err != nil || n < 100 {
			t.Fatalf("CTXGATE_SOAK=%q: want 1 or a call count >= 100", v)
		}
		total = n
	}
	if testing.Short() {
		total = 1000
	}
	native, err := NewNative(nil)
	if err != nil {
		t.Fatal(err)
	}
	ins := soakInputs(t, native)
	const workers = 2
	// The default 1 s deadline: a TinyGo collection no longer pauses a call
	// for seconds (gcscan_test.go); the slowest call is logged below.
	g := newRealGate(t, ModuleTinyGo, Options{PoolSize: workers})
	if g.ABI() != ABIRaw {
		t.Fatalf("the soak measures the default raw path; got %s", g.ABI())
	}
	ctx := context.Background()
	sample := func(calls int) soakPoint {
		m := measure()
		return soakPoint{calls: calls, heap: m.heap, goroutines: m.goroutines, guestPages: guestPages(t, g)}
	}

	// run makes n calls over the inputs in turn, split over the workers.
	var mu sync.Mutex
	failures := 0
	var slowest time.Duration
	slowestName := ""
	run := func(from, n int) {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := from + w; i < from+n; i += workers {
					in := &ins[i%len(ins)]
					call := g.Evaluate
					if in.validate {
						call = g.Validate
					}
					t0 := time.Now()
					out, err := call(ctx, in.body)
					d := time.Since(t0)
					var ge *GateError
					ok := (!in.wantErr && err == nil && bytes.Equal(out, in.want)) ||
						(in.wantErr && errors.As(err, &ge) && bytes.Equal(ge.JSON, in.want))
					mu.Lock()
					if d > slowest {
						slowest, slowestName = d, in.name
					}
					if !ok {
						failures++
						if failures <= 5 {
							t.Errorf("call %d, %s: %.120s, %v", i, in.name, out, err)
						}
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
	}

	// One pass over every input first, so each instance's heap has met the
	// largest input before the first sample.
	run(0, len(ins)*workers)
	start := sample(0)
	run(0, total/2)
	mid := sample(total / 2)
	run(total/2, total-total/2)
	end := sample(total)

	s := g.Stats()
	t.Logf("%d calls over %d inputs (%d good, %d bad), %d workers", total, len(ins), countGood(ins), len(ins)-countGood(ins), workers)
	for _, p := range []soakPoint{start, mid, end} {
		t.Logf("after %6d calls: host heap %7.2f MiB, guest pages %v, goroutines %d", p.calls, float64(p.heap)/(1<<20), p.guestPages, p.goroutines)
	}
	t.Logf("pool %+v, failures %d, slowest call %v (%s)", s, failures, slowest, slowestName)

	if failures > 0 {
		t.Fatalf("%d calls differed from native", failures)
	}
	if s.Discarded != 0 || s.Created != workers && s.Created != 1 {
		t.Fatalf("instances were replaced: %+v", s)
	}
	// Flat: in the second half no instance's memory grew past what the
	// largest one had needed by mid-run, and the host heap moved by less
	// than a megabyte. (Which instance meets which input depends on the
	// scheduler, so one instance may reach its peer's size late, once: a
	// heap doubling from 12 to 24 pages, seen on a loaded machine. A leak
	// keeps growing past it.)
	most := uint32(0)
	for _, p := range mid.guestPages {
		most = max(most, p)
	}
	for _, p := range end.guestPages {
		if p > most {
			t.Errorf("guest memory grew in the second half: %v -> %v pages", mid.guestPages, end.guestPages)
			break
		}
	}
	if d := int64(end.heap) - int64(mid.heap); d > 1<<20 {
		t.Errorf("host heap grew %d bytes in the second half", d)
	}
	if end.goroutines > start.goroutines {
		t.Errorf("goroutines %d -> %d", start.goroutines, end.goroutines)
	}
}

func countGood(ins []soakInput) int {
	n := 0
	for _, in := range ins {
		if !in.wantErr {
			n++
		}
	}
	return n
}
