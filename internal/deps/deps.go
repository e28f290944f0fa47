//go:build tools

// Package deps pins, for `go mod tidy`, the modules that only some build
// targets import (the wasm guests, the ABI test hosts). It is never compiled.
package deps

import (
	_ "github.com/banzaicloud/proxy-wasm-go-host/api"
	_ "github.com/banzaicloud/proxy-wasm-go-host/runtime/wazero"
	_ "github.com/cloudflare/circl/sign/ed25519"
	_ "github.com/cloudflare/circl/sign/mldsa/mldsa65"
	_ "github.com/extism/go-pdk"
	_ "github.com/extism/go-sdk"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/prometheus/client_golang/prometheus/promhttp"
	_ "github.com/prometheus/common/expfmt"
	_ "github.com/proxy-wasm/proxy-wasm-go-sdk/proxywasm"
	_ "github.com/proxy-wasm/proxy-wasm-go-sdk/proxywasm/proxytest"
	_ "github.com/tetratelabs/wazero"
	_ "gopkg.in/yaml.v3"
)
