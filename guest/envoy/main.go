// Command envoy is the ctxgate proxy-wasm HTTP filter module
// (guest/envoy/envoy-filter.wasm, built by build.sh and committed). All logic
// is in package filter.
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o envoy-filter.wasm ./guest/envoy
package main

import (
	"github.com/proxy-wasm/proxy-wasm-go-sdk/proxywasm"

	"github.com/ctxgate/ctxgate/guest/envoy/filter"
)

func main() {}

func init() { proxywasm.SetVMContext(filter.NewVMContext()) }
