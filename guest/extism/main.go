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
	"unsafe"

	"github.com/ctxgate/ctxgate/guest/extism/plugin"
	"github.com/extism/go-pdk"
)

var raw = plugin.NewRaw(plugin.New(pdk.GetConfig))

//go:wasmexport evaluate
func evaluate() int32 { return extismCall(plugin.OpEvaluate) }

//go:wasmexport validate
func validate() int32 { return extismCall(plugin.OpValidate) }

//go:wasmexport describe
func describe() int32 { return extismCall(plugin.OpDescribe) }

// extismCall runs op the way the raw exports do, over the Extism input read
// into the raw path's kept input buffer (input.go says why), and hands the
// result to the host: output and 0, or the error JSON through the PDK's
// error channel and 1 (the SDKs turn that into an error value). An instance
// is called through one ABI or the other, never both.
func extismCall(op plugin.Op) int32 {
	n := int(inputLength())
	readInput(raw.Input(n))
	out, isErr := raw.Call(op, n)
	if isErr {
		pdk.SetErrorString(string(out))
		return 1
	}
	pdk.Output(out)
	return 0
}

// The raw exports are for the bundled Go runner (host/raw.go,
// docs/performance.md): the host writes the input straight into this
// module's memory and reads the result from it, instead of the Extism
// kernel's 8-bytes-per-host-call copies. The Extism exports above stay for
// every other host.

// ctxgate_input returns the address of n writable bytes for the next
// ctxgate_call's input (0 if n is negative). The address stays valid for
// every later call of at most n bytes, until the next ctxgate_input, so a
// host asks again only when an input is larger than any before.
//
//go:wasmexport ctxgate_input
func rawInput(n int32) uint32 {
	b := raw.Input(int(n))
	if cap(b) == 0 {
		return 0
	}
	return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
}

// ctxgate_call runs op (0 evaluate, 1 validate, 2 describe) over the first n
// input bytes. The result is packed as address<<32 | length, with bit 31 set
// when it is the error JSON; it stays valid until the next call.
//
//go:wasmexport ctxgate_call
func rawCall(op, n int32) uint64 {
	out, isErr := raw.Call(plugin.Op(op), int(n))
	var addr uint32
	if len(out) > 0 {
		addr = uint32(uintptr(unsafe.Pointer(unsafe.SliceData(out))))
	}
	packed := uint64(addr)<<32 | uint64(uint32(len(out))&0x7fffffff)
	if isErr {
		packed |= 1 << 31
	}
	return packed
}

func main() {}
