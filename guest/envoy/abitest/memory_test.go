package abitest

import (
	"strconv"
	"strings"
	"testing"

	"github.com/proxy-wasm/proxy-wasm-go-sdk/proxywasm/proxytest"

	"github.com/ctxgate/ctxgate/internal/hostile"
	"github.com/ctxgate/ctxgate/internal/testenv"
)

// maxFilterMemory bounds the TinyGo filter's linear memory after rounds of
// TestFilterRepeated's inputs: twice the 768 pages it settles at in the
// first round, with a live heap near 23 MB. TinyGo's heap grows by doubling
// (when a collection leaves less than a third of it free, or no free run
// long enough), so a filter that fragments or keeps more shows as 192 MiB.
const maxFilterMemory = 96 << 20

// memoryHost is a host that can report its module's linear memory size.
type memoryHost interface {
	Host
	MemoryBytes() (int, error)
}

// TestFilterMemory: a fresh TinyGo filter under each ABI host answers the
// largest valid inputs and the largest input of every hostile class ten
// times, and its linear memory stays within maxFilterMemory after every
// round. Neither ABI test host caps a module's memory, and Envoy need not
// either, so the bound must come from the filter. Its large garbage is
// what breaks it: TinyGo scans the module's read-only data as roots, so a
// megabyte object there is kept for good when a word of that data reads as
// an address inside it. While the filter read each body whole and built
// its prompt as new strings, memory doubled to 192 MiB by the sixth round.
func TestFilterMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the TinyGo module is skipped")
	}
	mod, err := BuildTinyGo()
	if err != nil {
		if testenv.InCI() {
			t.Fatalf("cannot build the TinyGo filter module: %v", err)
		}
		t.Skipf("tinygo module skipped: %v", err)
	}
	cases, exs := hostileExchanges(t)
	keep := hostile.Representatives(cases)
	var rx []Exchange
	for i := range exs {
		if keep[i] {
			rx = append(rx, exs[i])
		}
	}
	hosts := []struct {
		name   string
		rounds int
		make   func(t *testing.T) memoryHost
	}{
		{"proxytest", 10, func(t *testing.T) memoryHost {
			vm, err := proxytest.NewWasmVMContext(mod.Wasm)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { vm.Close() })
			return NewProxytestWasm(vm).(memoryHost)
		}},
		{"banzaicloud", 10, func(t *testing.T) memoryHost {
			banzaiOnce.Do(func() { banzaiVM = NewBanzaiVM() })
			h, err := NewBanzai(banzaiVM, mod.Wasm)
			if err != nil {
				t.Fatal(err)
			}
			return h.(memoryHost)
		}},
	}
	for _, hk := range hosts {
		t.Run(hk.name, func(t *testing.T) {
			h := hk.make(t)
			defer h.Close()
			if !h.Start(policyConfig(t, testPolicy, "")) {
				t.Fatalf("plugin did not start: %q", h.Logs())
			}
			var pages []string
			for round := 1; round <= hk.rounds; round++ {
				for _, ex := range rx {
					h.Do(ex)
				}
				n, err := h.MemoryBytes()
				if err != nil {
					t.Fatal(err)
				}
				pages = append(pages, strconv.Itoa(n>>16))
				if n > maxFilterMemory {
					t.Fatalf("after round %d the filter's memory is %d MiB, over %d MiB (64 KiB pages per round: %s)",
						round, n>>20, maxFilterMemory>>20, strings.Join(pages, " "))
				}
			}
			t.Logf("64 KiB pages after each round: %s", strings.Join(pages, " "))
		})
	}
}
