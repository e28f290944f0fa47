// Package abitest drives the ctxgate Envoy filter through real implementations
// of the proxy-wasm ABI's host side, so one test table runs the filter
// natively, as the built .wasm under the SDK's proxytest host (wazero), and
// as the same .wasm under banzaicloud's independent proxy-wasm-go-host.
//
// A Host plays Envoy's part for one HTTP exchange at a time: request headers,
// the body in chunks (buffered the way Envoy buffers when the filter pauses),
// then either the filter's local reply or the upstream's response, which is
// run back through the filter's response callbacks.
package abitest

import (
	"sort"
	"strings"
)

// Host is one proxy-wasm host running the filter.
type Host interface {
	Name() string
	// Start starts the VM and the plugin with the plugin configuration and
	// reports whether the plugin accepted it.
	Start(config []byte) bool
	// Do runs one HTTP exchange through the filter.
	Do(ex Exchange) Result
	// Counter and Histogram read a metric the plugin defined; Histogram
	// returns the last recorded value.
	Counter(name string) (uint64, error)
	Histogram(name string) (uint64, error)
	// Logs returns the warning, error and critical log lines so far.
	Logs() []string
	Close()
}

// Exchange is what the client sends and what the upstream would answer.
type Exchange struct {
	Method, Path string
	Headers      [][2]string // extra request headers (content-type, ...)
	Body         []byte
	Chunks       int // deliver the body in this many pieces (default 1)
	Upstream     Upstream
}

// Upstream is the upstream's response, used when the filter forwards.
type Upstream struct {
	Status  string
	Headers [][2]string
	Body    []byte
}

// Result is what each side saw after the filter ran.
type Result struct {
	Forwarded       bool        // the request reached the upstream
	RequestHeaders  [][2]string // as forwarded; after a local reply, as the host holds them (what tracers' request_header tags read)
	RequestBody     []byte      // as forwarded
	Local           *Local      // the filter's local reply, if any
	ResponseHeaders [][2]string // as the client gets them
	ResponseBody    []byte
	// Properties are the ctxgate.* properties the filter set during the
	// exchange (Envoy's filter state wasm.ctxgate.*), by name.
	Properties map[string]string
}

// PropertyNames are the properties the filter publishes the decision as,
// as docs/envoy.md names them, each with the x-ctxgate-* header it
// mirrors.
var PropertyNames = map[string]string{
	"ctxgate.action":       "x-ctxgate-action",
	"ctxgate.level":        "x-ctxgate-level",
	"ctxgate.confidence":   "x-ctxgate-confidence",
	"ctxgate.policy":       "x-ctxgate-policy",
	"ctxgate.refusal":      "x-ctxgate-refusal",
	"ctxgate.error":        "x-ctxgate-error",
	"ctxgate.answer_check": "x-ctxgate-answer-check",
	"ctxgate.soft_refusal": "x-ctxgate-soft-refusal",
}

// Local is a reply the filter sent without calling the upstream.
type Local struct {
	Status  uint32
	Headers [][2]string
	Body    []byte
}

// Header returns the first value of name (case-insensitive) in h.
func Header(h [][2]string, name string) (string, bool) {
	for _, kv := range h {
		if strings.EqualFold(kv[0], name) {
			return kv[1], true
		}
	}
	return "", false
}

// CtxgateHeaders returns the x-ctxgate-* headers of h, sorted, as "k: v"
// lines, so hosts that order headers differently compare equal.
func CtxgateHeaders(h [][2]string) []string {
	var out []string
	for _, kv := range h {
		if k := strings.ToLower(kv[0]); strings.HasPrefix(k, "x-ctxgate-") {
			out = append(out, k+": "+kv[1])
		}
	}
	sort.Strings(out)
	return out
}

// requestHeaders builds the pseudo and regular headers Envoy hands a filter.
func (ex *Exchange) requestHeaders() [][2]string {
	method := ex.Method
	if method == "" {
		method = "POST"
	}
	path := ex.Path
	if path == "" {
		path = "/v1/chat/completions"
	}
	h := [][2]string{
		{":method", method}, {":path", path}, {":authority", "llm.example"}, {":scheme", "http"},
	}
	h = append(h, ex.Headers...)
	return h
}

func (ex *Exchange) responseHeaders() [][2]string {
	status := ex.Upstream.Status
	if status == "" {
		status = "200"
	}
	return append([][2]string{{":status", status}}, ex.Upstream.Headers...)
}

// chunks splits the body into n pieces, the last one ending the stream.
func (ex *Exchange) chunks() [][]byte {
	n := ex.Chunks
	if n < 1 {
		n = 1
	}
	if n > len(ex.Body) {
		n = max(len(ex.Body), 1)
	}
	out := make([][]byte, 0, n)
	size := (len(ex.Body) + n - 1) / n
	for i := 0; i < len(ex.Body); i += size {
		out = append(out, ex.Body[i:min(i+size, len(ex.Body))])
	}
	if len(out) == 0 {
		out = append(out, nil)
	}
	return out
}
