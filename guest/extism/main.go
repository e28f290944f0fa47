//go:build wasip1

// Command extism is the ctxgate Extism guest: three exports over the core,
// built twice (TinyGo: host/wasm/ctxgate.wasm; standard Go:
// host/wasm/ctxgate-go.wasm) from this one file.
//
// //go:wasmexport is understood by both compilers (Go 1.24+ and TinyGo), so
// no build tags split the exports. Both builds are reactors
// (-buildmode=c-shared): the host must call _initialize first, which the
// Extism SDKs do when WASI is enabled. Nothing here starts a goroutine.
package main

import (
	"github.com/ctxgate/ctxgate/guest/extism/plugin"
	"github.com/extism/go-pdk"
)

var guest = plugin.New(pdk.GetConfig)

//go:wasmexport evaluate
func evaluate() int32 { return reply(guest.Evaluate(pdk.Input())) }

//go:wasmexport validate
func validate() int32 { return reply(guest.Validate(pdk.Input())) }

//go:wasmexport describe
func describe() int32 { return reply(guest.Describe()) }

// reply hands the result to the host: output and 0, or the error JSON through
// the PDK's error channel and 1 (the SDKs turn that into an error value).
func reply(out, errJSON []byte) int32 {
	if errJSON != nil {
		pdk.SetErrorString(string(errJSON))
		return 1
	}
	pdk.Output(out)
	return 0
}

func main() {}
