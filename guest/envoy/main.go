// Command envoy is the ctxgate proxy-wasm HTTP filter module
// (dist/envoy-filter.wasm, built by build.sh). All logic is in package filter.
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o envoy-filter.wasm ./guest/envoy
package main

import (
	"github.com/proxy-wasm/proxy-wasm-go-sdk/proxywasm"

	"github.com/ctxgate/ctxgate/guest/envoy/filter"
)

func main() {}

func init() { proxywasm.SetVMContext(filter.NewVMContext()) }
