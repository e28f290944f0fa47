package filter

import (
	"unsafe"

	"github.com/proxy-wasm/proxy-wasm-go-sdk/proxywasm"
)

// A proxy-wasm filter cannot start or tag spans. What it can do is set
// properties: Envoy keeps each as filter state named "wasm." + the
// property's name, which its tracers tag spans with (custom_tags value
// "%FILTER_STATE(wasm.ctxgate.action:PLAIN)%", Envoy 1.37 and later) and
// its access logs print. The decision goes there as well as into the
// x-ctxgate-* request headers (a custom_tags request_header on any
// version), for every outcome: forwarded, refused, skipped or failed
// (docs/envoy.md, "Tracing").

// decisionProperties names the property each x-ctxgate-* header is
// published as. Paths are made once: TinyGo collects in pauses.
var decisionProperties = map[string][]string{
	HeaderAction:      {"ctxgate.action"},
	HeaderLevel:       {"ctxgate.level"},
	HeaderConfidence:  {"ctxgate.confidence"},
	HeaderPolicy:      {"ctxgate.policy"},
	HeaderRefusal:     {"ctxgate.refusal"},
	HeaderError:       {"ctxgate.error"},
	HeaderAnswerCheck: {"ctxgate.answer_check"},
	HeaderSoftRefusal: {"ctxgate.soft_refusal"},
}

// publish sets the properties of the headers that have one. A host that
// keeps no properties (it answers unimplemented) still gets the headers,
// so its refusal is not an error of the exchange. The value's bytes are
// the header string's own: the host copies them, and a copy here would be
// garbage for TinyGo's collector on every request.
func publish(headers [][2]string) {
	for _, h := range headers {
		setProperty(h[0], h[1])
	}
}

func setProperty(header, value string) {
	if path := decisionProperties[header]; path != nil && value != "" {
		proxywasm.SetProperty(path, unsafe.Slice(unsafe.StringData(value), len(value)))
	}
}

// skippedCheck reports an answer check that did not run (skipped-stream,
// skipped-oversize, ...) in the response header and its property.
func skippedCheck(value string) {
	proxywasm.ReplaceHttpResponseHeader(HeaderAnswerCheck, value)
	setProperty(HeaderAnswerCheck, value)
}
