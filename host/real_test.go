package host

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// sampleRequest is a small well-formed request every policy decides.
const sampleRequest = `{"query":"how do I rotate the signing key","chunks":[` +
	`{"id":"c1","doc_id":"ops","text":"To rotate the signing key, generate a new key pair and publish it before retiring the old one.","scores":{"vector":0.82,"bm25":7.1}},` +
	`{"id":"c2","doc_id":"faq","text":"Key rotation happens every ninety days.","scores":{"vector":0.55,"bm25":2.3}}]}`

// The real modules, natively and in Wasm, through the full lifecycle.
func TestRealModules(t *testing.T) {
	native, err := NewNative(nil)
	if err != nil {
		t.Fatalf("NewNative: %v", err)
	}
	ctx := context.Background()
	wantDecision, err := native.Evaluate(ctx, []byte(sampleRequest))
	if err != nil {
		t.Fatalf("native Evaluate: %v", err)
	}
	wantDescribe, err := native.Describe(ctx)
	if err != nil || len(wantDescribe) == 0 {
		t.Fatalf("native Describe: %q, %v", wantDescribe, err)
	}
	for _, m := range realModules {
		t.Run(m.String(), func(t *testing.T) {
			g := newRealGate(t, m, Options{PoolSize: 2})
			got, err := g.Describe(ctx)
			if err != nil || !bytes.Equal(got, wantDescribe) {
				t.Fatalf("Describe = %s, %v\nnative   %s", got, err, wantDescribe)
			}
			got, err = g.Evaluate(ctx, []byte(sampleRequest))
			if err != nil || !bytes.Equal(got, wantDecision) {
				t.Fatalf("Evaluate = %s, %v\nnative   %s", got, err, wantDecision)
			}
			if s := g.Stats(); s.Discarded != 0 || s.Live != 1 {
				t.Fatalf("stats: %+v", s)
			}
		})
	}
}

// A bad policy fails New with the guest's bad_policy error, as natively.
func TestRealBadPolicy(t *testing.T) {
	for _, policy := range []string{`{`, `{"name":3}`, `[]`} {
		_, nerr := NewNative([]byte(policy))
		var nge *GateError
		if !errors.As(nerr, &nge) || nge.Code != "bad_policy" {
			t.Fatalf("native, policy %s: %v, want bad_policy", policy, nerr)
		}
		for _, m := range realModules {
			g, err := New(context.Background(), Options{Wasm: builtModule(t, m), Policy: []byte(policy)})
			if err == nil {
				g.Close(context.Background())
			}
			var ge *GateError
			if !errors.As(err, &ge) || ge.Code != "bad_policy" {
				t.Fatalf("%s, policy %s: %v, want bad_policy", m, policy, err)
			}
			if ge.Message != nge.Message || ge.Field != nge.Field {
				t.Errorf("%s, policy %s: %q at %q; native says %q at %q", m, policy, ge.Message, ge.Field, nge.Message, nge.Field)
			}
		}
	}
}

// Concurrent callers on the real modules all get the native bytes.
func TestRealConcurrent(t *testing.T) {
	native, err := NewNative(nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := native.Evaluate(context.Background(), []byte(sampleRequest))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range realModules {
		t.Run(m.String(), func(t *testing.T) {
			g := newRealGate(t, m, Options{PoolSize: 3})
			var wg sync.WaitGroup
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 25 {
						got, err := g.Evaluate(context.Background(), []byte(sampleRequest))
						if err != nil || !bytes.Equal(got, want) {
							t.Errorf("Evaluate = %.80s, %v", got, err)
							return
						}
					}
				}()
			}
			wg.Wait()
			if s := g.Stats(); s.Live > 3 || s.Discarded != 0 {
				t.Fatalf("stats: %+v", s)
			}
		})
	}
}

// Under a tight memory cap the real guest runs out of memory, traps, and is
// replaced; the next call works. (The cap itself is proven exactly with the
// hostile guest in TestMemoryCap.) Sizes were found by measurement: TinyGo
// decides a 95 KB request within 17 pages, so it gets 256 KB; the Go runtime
// and the built-in policy need between 64 and 72 pages before the first
// call, so it gets 72 and 365 KB.
func TestRealMemoryCapSurvives(t *testing.T) {
	cases := []struct {
		m          Module
		pages      uint32
		chunks     int
		textRepeat int
	}{
		{ModuleTinyGo, 17, 100, 140},
		{ModuleGo, 72, 100, 200},
	}
	for _, tc := range cases {
		t.Run(tc.m.String(), func(t *testing.T) {
			big := bigRequest(tc.chunks, tc.textRepeat)
			g := newRealGate(t, tc.m, Options{PoolSize: 1, MaxPages: tc.pages, MaxInputBytes: len(big), Timeout: 10 * time.Second})
			_, err := g.Evaluate(context.Background(), big)
			if !errors.Is(err, ErrTrap) {
				t.Fatalf("%d-byte request under a %d-page cap: %v, want ErrTrap (out of memory)", len(big), tc.pages, err)
			}
			if _, err := g.Evaluate(context.Background(), []byte(sampleRequest)); err != nil {
				t.Fatalf("next call: %v", err)
			}
			if s := g.Stats(); s.Discarded != 1 || s.Created != 2 || s.Live != 1 {
				t.Fatalf("stats: %+v, want the trapped instance replaced", s)
			}
		})
	}
}

// bigRequest has n chunks of about 18*textRepeat bytes of text each.
func bigRequest(n, textRepeat int) []byte {
	var b strings.Builder
	b.WriteString(`{"query":"lorem memory","chunks":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"id":"c` + strconv.Itoa(i) + `","text":"` + strings.Repeat("lorem ipsum dolor ", textRepeat) + `","scores":{"vector":0.5}}`)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// The deadline holds on the real module too: a deadline shorter than any
// call (already past) returns ErrTimeout and the gate keeps working.
func TestRealDeadline(t *testing.T) {
	for _, m := range realModules {
		t.Run(m.String(), func(t *testing.T) {
			g := newRealGate(t, m, Options{PoolSize: 1})
			ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
			defer cancel()
			if _, err := g.Evaluate(ctx, []byte(sampleRequest)); !errors.Is(err, ErrTimeout) {
				t.Fatalf("expired context: %v, want ErrTimeout", err)
			}
			if _, err := g.Evaluate(context.Background(), []byte(sampleRequest)); err != nil {
				t.Fatalf("next call: %v", err)
			}
		})
	}
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
