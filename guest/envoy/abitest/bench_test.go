package abitest

import (
	"encoding/json"
	"testing"
)

// BenchmarkFilter times one whole gated exchange (request headers, body,
// decision, rewrite, response headers, body and answer check) of the inject
// sample in each host, next to the bare core on the same gate request. Read
// the results as ratios from one run; the machine is shared and noisy, so no
// test asserts a time.
func BenchmarkFilter(b *testing.B) {
	ex := Exchange{Body: body(b, "inject.json"), Upstream: answer("At sea level water boils at 100 degrees Celsius [S1]."),
		Headers: [][2]string{{"content-type", "application/json"}}}
	config := policyConfig(b, testPolicy, "")

	b.Run("core-evaluate", func(b *testing.B) {
		e := engineFor(b, testPolicy)
		var chat struct {
			Messages  []struct{ Content string }
			Documents json.RawMessage
		}
		if err := json.Unmarshal(ex.Body, &chat); err != nil {
			b.Fatal(err)
		}
		req, _ := json.Marshal(map[string]any{"query": chat.Messages[len(chat.Messages)-1].Content, "chunks": chat.Documents})
		b.ReportAllocs()
		for b.Loop() {
			if _, err := e.Evaluate(req); err != nil {
				b.Fatal(err)
			}
		}
	})

	run := func(b *testing.B, h Host) {
		defer h.Close()
		if !h.Start(config) {
			b.Fatalf("plugin did not start: %q", h.Logs())
		}
		b.ReportAllocs()
		for b.Loop() {
			if r := h.Do(ex); !r.Forwarded {
				b.Fatal("not forwarded")
			}
		}
	}
	b.Run("proxytest-native", func(b *testing.B) { run(b, NewNative()) })

	mods := []*Module{}
	if mod, err := BuildGo(); err == nil {
		mods = append(mods, mod)
	} else {
		b.Logf("go module skipped: %v", err)
	}
	if mod, err := BuildTinyGo(); err == nil {
		mods = append(mods, mod)
	} else {
		b.Logf("tinygo module skipped: %v", err)
	}
	for _, mod := range mods {
		b.Run("proxytest-wasm-"+mod.Name, func(b *testing.B) {
			vm, err := sharedProxytestVM(mod)
			if err != nil {
				b.Fatal(err)
			}
			run(b, NewProxytestWasm(vm))
		})
		b.Run("banzaicloud-"+mod.Name, func(b *testing.B) {
			banzaiOnce.Do(func() { banzaiVM = NewBanzaiVM() })
			h, err := NewBanzai(banzaiVM, mod.Wasm)
			if err != nil {
				b.Fatal(err)
			}
			run(b, h)
		})
	}
}
