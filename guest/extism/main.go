//go:build wasip1

// Command extism is the ctxgate guest: three Extism exports and the raw
// exports of docs/abi.md over the core, built twice (TinyGo:
// host/wasm/ctxgate.wasm; standard Go: host/wasm/ctxgate-go.wasm) from this
// one file.
//
// //go:wasmexport is understood by both compilers (Go 1.24+ and TinyGo), so
// no build tags split the exports. Both builds are reactors
// (-buildmode=c-shared): the host must call _initialize first, which the
// Extism SDKs do when WASI is enabled. Nothing here starts a goroutine.
package main

import (
	"unsafe"

	"github.com/ctxgate/ctxgate/guest/extism/plugin"
	"github.com/ctxgate/ctxgate/internal/abi"
	"github.com/extism/go-pdk"
)

var raw = plugin.NewRaw(plugin.New(pdk.GetConfig))

//go:wasmexport evaluate
func evaluate() int32 { return extismCall(abi.OpEvaluate) }

//go:wasmexport validate
func validate() int32 { return extismCall(abi.OpValidate) }

//go:wasmexport describe
func describe() int32 { return extismCall(abi.OpDescribe) }

// extismCall runs op the way the raw exports do, over the Extism input read
// into the raw path's kept input buffer (input.go says why), and hands the
// result to the host: output and 0, or the error JSON through the PDK's
// error channel and 1 (the SDKs turn that into an error value). An instance
// is called through one ABI or the other, never both.
func extismCall(op abi.Op) int32 {
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

// The raw exports (docs/abi.md, internal/abi) are for hosts that write the
// input straight into this module's memory and read the result from it,
// instead of the Extism kernel's 8-bytes-per-host-call copies: the bundled
// Go runner (host/raw.go) and any host written from docs/abi.md. The
// Extism exports above stay for every Extism host. The names in the
// directives below are internal/abi's Export* constants (a directive takes
// no constant; the module tests compare the built exports with them).

// ctxgate_abi_version returns abi.Version, so a host can refuse a module
// whose raw ABI it was not written for before calling anything else.
//
//go:wasmexport ctxgate_abi_version
func abiVersion() int32 { return abi.Version }

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

// ctxgate_call runs op (abi.OpEvaluate, OpValidate, OpDescribe) over the
// first n input bytes and returns the result packed by abi.Pack: address,
// length, and the error bit when it is the error JSON. The result stays
// valid until the next call.
//
//go:wasmexport ctxgate_call
func rawCall(op, n int32) uint64 {
	out, isErr := raw.Call(abi.Op(op), int(n))
	var addr uint32
	if len(out) > 0 {
		addr = uint32(uintptr(unsafe.Pointer(unsafe.SliceData(out))))
	}
	return abi.Pack(addr, uint32(len(out)), isErr)
}

func main() {}
