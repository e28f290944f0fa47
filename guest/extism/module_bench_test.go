//go:build !wasip1

package main

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkEvaluate decides one golden request natively and through each
// built module on a warm instance (the per-call cost a pooled host pays).
// Compare the three in one run; absolute times on a shared machine mean little.
func BenchmarkEvaluate(b *testing.B) {
	req, err := os.ReadFile(filepath.Join("..", "..", "testdata", "requests", "default", "inject.json"))
	if err != nil {
		b.Skip("no golden request: ", err)
	}
	b.Run("native", func(b *testing.B) {
		p := native(nil)
		if _, e := p.Evaluate(req); e != nil {
			b.Fatalf("%s", e)
		}
		b.SetBytes(int64(len(req)))
		for i := 0; i < b.N; i++ {
			p.Evaluate(req)
		}
	})
	for _, m := range builtModules {
		b.Run(m.name, func(b *testing.B) {
			wasm, err := os.ReadFile(filepath.Join("..", "..", "host", "wasm", m.file))
			if err != nil {
				b.Skip("not built: ", err)
			}
			p := newPlugin(b, wasm, nil, 0)
			if _, _, err := p.Call("evaluate", req); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(req)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, _, err := p.Call("evaluate", req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDescribe is the cost of an Extism call that does almost nothing:
// the floor under BenchmarkEvaluate's module numbers.
func BenchmarkDescribe(b *testing.B) {
	for _, m := range builtModules {
		b.Run(m.name, func(b *testing.B) {
			wasm, err := os.ReadFile(filepath.Join("..", "..", "host", "wasm", m.file))
			if err != nil {
				b.Skip("not built: ", err)
			}
			p := newPlugin(b, wasm, nil, 0)
			if _, _, err := p.Call("describe", nil); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, _, err := p.Call("describe", nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
