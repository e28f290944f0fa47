package host

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// A module checking the largest answers one after another must keep
// answering: with a fresh input, answer copy and output per call, the TinyGo
// module's heap fragmented until every ninth 3 MiB answer (the limits then
// allowed 4 MiB) found no room under the memory cap and trapped (the host
// then replaced the instance, so only that call failed). The exports now
// keep their input and output buffers and parse the answer in place. Each
// call must give native's bytes.
func TestLargeAnswersNeverTrap(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 48 multi-megabyte answer checks")
	}
	// The largest answers the default max_request_bytes (1 MiB) allows.
	sentence := `{"query":"q","tags":["S1"],"answer":"` + strings.Repeat("abcdefgh", (1<<20-64)/8) + `"}`
	cited := `{"query":"q","tags":["S1"],"answer":"` + strings.Repeat("Cited [S1]. Not cited here. ", (1<<20-64)/28) + `"}`
	native, err := NewNative(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range realModules {
		for _, abi := range []ABI{ABIRaw, ABIExtism} {
			t.Run(m.String()+"/"+abi.String(), func(t *testing.T) {
				// InterruptNever: the point is memory, not the deadline, and
				// without the checks the 24 calls take ~1 s, not ~10.
				g := newRealGate(t, m, Options{PoolSize: 1, ABI: abi, Interrupt: InterruptNever, Timeout: time.Minute})
				for _, in := range []string{sentence, cited} {
					want, err := native.Validate(context.Background(), []byte(in))
					if err != nil {
						t.Fatal(err)
					}
					for i := 0; i < 12; i++ {
						got, err := g.Validate(context.Background(), []byte(in))
						if err != nil {
							t.Fatalf("call %d of a %d-byte answer: %v", i+1, len(in), err)
						}
						if !bytes.Equal(got, want) {
							t.Fatalf("call %d of a %d-byte answer: %d bytes, native %d", i+1, len(in), len(got), len(want))
						}
					}
				}
			})
		}
	}
}
