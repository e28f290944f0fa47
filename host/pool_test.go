package host

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ctxgate/ctxgate/gate/bundle"
)

func TestHostileEcho(t *testing.T) {
	g := newHostileGate(t, Options{PoolSize: 1})
	ctx := context.Background()
	for _, in := range []string{"hello", `{"query":"q"}`, string(bytes.Repeat([]byte("x"), 5000))} {
		out, err := g.Evaluate(ctx, []byte(in))
		if err != nil || string(out) != in {
			t.Fatalf("Evaluate(%.20q) = %.20q, %v; want the input back", in, out, err)
		}
	}
	if out, err := g.Validate(ctx, []byte("v")); err != nil || string(out) != "v" {
		t.Fatalf("Validate = %q, %v", out, err)
	}
	if out, err := g.Describe(ctx); err != nil || len(out) != 0 {
		t.Fatalf("Describe = %q, %v", out, err)
	}
	if s := g.Stats(); s.Created != 1 || s.Discarded != 0 || s.Idle != 1 || s.InUse != 0 {
		t.Fatalf("stats after clean calls: %+v", s)
	}
}

// Every fault poisons exactly the instance it happened in; the next call gets
// a fresh one and succeeds.
func TestFaultReplacesInstance(t *testing.T) {
	cases := []struct {
		name  string
		input string
		want  error
	}{
		{"trap", "T", ErrTrap},
		{"non-zero return without error", "X", ErrTrap},
		{"endless loop", "L", ErrTimeout},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := newHostileGate(t, Options{PoolSize: 1, Timeout: 100 * time.Millisecond})
			ctx := context.Background()
			start := time.Now()
			_, err := g.Evaluate(ctx, []byte(tc.input))
			if !errors.Is(err, tc.want) {
				t.Fatalf("Evaluate(%q) error = %v, want %v", tc.input, err, tc.want)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("fault took %v to surface", d)
			}
			if s := g.Stats(); s.Discarded != 1 || s.Idle != 0 || s.InUse != 0 {
				t.Fatalf("stats after the fault: %+v, want one discarded and none idle", s)
			}
			out, err := g.Evaluate(ctx, []byte("next"))
			if err != nil || string(out) != "next" {
				t.Fatalf("call after the fault = %q, %v", out, err)
			}
			if s := g.Stats(); s.Created != 2 || s.Discarded != 1 {
				t.Fatalf("stats after the replacement: %+v, want 2 created, 1 discarded", s)
			}
		})
	}
}

func TestTimeoutMatchesContextError(t *testing.T) {
	g := newHostileGate(t, Options{PoolSize: 1, Timeout: -1})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := g.Evaluate(ctx, []byte("L"))
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("deadline: err = %v, want ErrTimeout and context.DeadlineExceeded", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err = g.Evaluate(ctx, []byte("L"))
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancel: err = %v, want ErrTimeout and context.Canceled", err)
	}
	if out, err := g.Evaluate(context.Background(), []byte("ok")); err != nil || string(out) != "ok" {
		t.Fatalf("after two timeouts: %q, %v", out, err)
	}
}

func TestGuestErrorKeepsInstance(t *testing.T) {
	g := newHostileGate(t, Options{PoolSize: 1})
	const js = `{"error":{"code":"bad_field","message":"must be a number","field":"chunks[2].scores.vector"}}`
	_, err := g.Evaluate(context.Background(), []byte("E"+js))
	var ge *GateError
	if !errors.As(err, &ge) {
		t.Fatalf("err = %v (%T), want *GateError", err, err)
	}
	if ge.Code != "bad_field" || ge.Field != "chunks[2].scores.vector" || ge.Message != "must be a number" || string(ge.JSON) != js {
		t.Fatalf("GateError = %+v", ge)
	}
	if ge.Status() != 422 {
		t.Fatalf("Status = %d, want 422", ge.Status())
	}
	if _, err := g.Evaluate(context.Background(), []byte("again")); err != nil {
		t.Fatal(err)
	}
	if s := g.Stats(); s.Created != 1 || s.Discarded != 0 {
		t.Fatalf("a guest error must not replace the instance: %+v", s)
	}
	// An error string that is not the error JSON is a broken guest.
	if _, err := g.Evaluate(context.Background(), []byte("Eplain text")); !errors.Is(err, ErrTrap) {
		t.Fatalf("non-JSON guest error: %v, want ErrTrap", err)
	}
}

// The memory cap is real: a guest growing its memory is refused at exactly
// MaxPages.
func TestMemoryCap(t *testing.T) {
	for _, pages := range []uint32{20, 40} {
		g := newHostileGate(t, Options{PoolSize: 1, MaxPages: pages, MaxInputBytes: 1024})
		out, err := g.Evaluate(context.Background(), []byte("G"))
		if err != nil || len(out) != 4 {
			t.Fatalf("MaxPages %d: grow = %x, %v", pages, out, err)
		}
		if got := binary.LittleEndian.Uint32(out); got != pages {
			t.Fatalf("MaxPages %d: the guest grew to %d pages", pages, got)
		}
	}
}

func TestInputLimit(t *testing.T) {
	g := newHostileGate(t, Options{PoolSize: 1, MaxInputBytes: 1000})
	_, err := g.Evaluate(context.Background(), make([]byte, 1001))
	var ge *GateError
	if !errors.As(err, &ge) || ge.Code != "limit" || ge.Status() != 413 {
		t.Fatalf("oversized input: %v, want a limit GateError", err)
	}
	if out, err := g.Evaluate(context.Background(), make([]byte, 1000)); err != nil || len(out) != 1000 {
		t.Fatalf("input at the limit: %d bytes, %v", len(out), err)
	}
}

func TestOptionsChecked(t *testing.T) {
	for _, o := range []Options{
		{MaxPages: 16, MaxInputBytes: 16 << 16},
		{PoolSize: -1},
		{PoolSize: 2, Prewarm: 3},
		{MaxPages: 70000},
		{TrustMode: bundle.Ed25519Only}, // a mode without trust keys verifies nothing
		{TrustMode: 9, TrustKeys: []byte(`{}`)},
	} {
		o.Wasm = hostileModule()
		if g, err := New(context.Background(), o); err == nil {
			g.Close(context.Background())
			t.Errorf("New(%+v) accepted bad options", o)
		}
	}
	if _, err := New(context.Background(), Options{Wasm: []byte("not wasm")}); err == nil {
		t.Error("New accepted bytes that are not a module")
	}
}

func TestClose(t *testing.T) {
	g := newHostileGate(t, Options{PoolSize: 2})
	if err := g.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := g.Close(context.Background()); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := g.Evaluate(context.Background(), []byte("x")); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v, want ErrClosed", err)
	}
}

// Closing while a call runs ends that call with ErrClosed, not a hang.
func TestCloseDuringCall(t *testing.T) {
	g := newHostileGate(t, Options{PoolSize: 1, Timeout: -1})
	done := make(chan error, 1)
	go func() {
		_, err := g.Evaluate(context.Background(), []byte("L"))
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	g.Close(context.Background())
	select {
	case err := <-done:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("call in flight at Close: %v, want ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not stop the running call")
	}
}

// A caller waiting for a busy pool gives up at its own deadline, without
// harming the instance that is busy.
func TestPoolWaitHonoursContext(t *testing.T) {
	g := newHostileGate(t, Options{PoolSize: 1, Timeout: -1})
	busy := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
		defer cancel()
		_, err := g.Evaluate(ctx, []byte("L"))
		busy <- err
	}()
	time.Sleep(50 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := g.Evaluate(ctx, []byte("wait")); !errors.Is(err, ErrTimeout) {
		t.Fatalf("waiting caller: %v, want ErrTimeout", err)
	}
	if s := g.Stats(); s.Discarded != 0 || s.InUse != 1 {
		t.Fatalf("the waiting caller's timeout touched an instance: %+v", s)
	}
	if err := <-busy; !errors.Is(err, ErrTimeout) {
		t.Fatalf("busy caller: %v", err)
	}
}

// Many goroutines share a small pool; faults in some calls never leak into
// others, and the pool never holds more than PoolSize instances.
func TestConcurrentCalls(t *testing.T) {
	const size, workers, calls = 3, 12, 40
	g := newHostileGate(t, Options{PoolSize: size, Timeout: 2 * time.Second})
	var wg sync.WaitGroup
	var mu sync.Mutex
	traps := 0
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				in := "w" + strconv.Itoa(w) + "-" + strconv.Itoa(i)
				if (w+i)%17 == 0 {
					in = "T"
				}
				out, err := g.Evaluate(context.Background(), []byte(in))
				switch {
				case in == "T" && errors.Is(err, ErrTrap):
					mu.Lock()
					traps++
					mu.Unlock()
				case err != nil || string(out) != in:
					t.Errorf("Evaluate(%q) = %q, %v", in, out, err)
					return
				}
				if s := g.Stats(); s.Live > size {
					t.Errorf("pool holds %d instances, size %d", s.Live, size)
				}
			}
		}()
	}
	wg.Wait()
	s := g.Stats()
	if s.InUse != 0 || s.Live != s.Idle || s.Live > size || s.Discarded != uint64(traps) || s.Created > uint64(size+traps) {
		t.Fatalf("stats %+v after %d traps", s, traps)
	}
	t.Logf("%d calls, %d traps: %+v", workers*calls, traps, s)
}

// The native gate under many goroutines (run with -race): one Engine per
// goroutine at a time, identical bytes for everyone.
func TestNativeConcurrent(t *testing.T) {
	n, err := NewNative(nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := n.Evaluate(context.Background(), []byte(sampleRequest))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				in := []byte(sampleRequest)
				if i%5 == 0 {
					in = []byte(`{"query":`)
				}
				got, err := n.Evaluate(context.Background(), in)
				if i%5 == 0 {
					var ge *GateError
					if !errors.As(err, &ge) || ge.Code != "bad_json" {
						t.Errorf("bad request: %v", err)
						return
					}
					continue
				}
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("Evaluate = %.60s, %v", got, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	n.Close(context.Background())
	if _, err := n.Evaluate(context.Background(), []byte(sampleRequest)); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}
