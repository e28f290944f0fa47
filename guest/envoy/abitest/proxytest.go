package abitest

import (
	"bytes"
	"errors"
	"maps"
	"reflect"
	"strings"

	"github.com/proxy-wasm/proxy-wasm-go-sdk/proxywasm/proxytest"
	"github.com/proxy-wasm/proxy-wasm-go-sdk/proxywasm/types"

	"github.com/ctxgate/ctxgate/guest/envoy/filter"
)

// sdkHost is the proxy-wasm-go-sdk's proxytest emulator. With vm == nil the
// filter runs natively in the test process; with a proxytest.WasmVMContext it
// runs as the built module on wazero, the emulator answering its host calls.
// The emulator is process-global: one sdkHost at a time, never in parallel.
type sdkHost struct {
	name  string
	vm    types.VMContext
	host  proxytest.HostEmulator
	reset func()
}

// NewNative runs the filter package directly under proxytest.
func NewNative() Host { return &sdkHost{name: "proxytest-native", vm: filter.NewVMContext()} }

// NewProxytestWasm runs the built module under proxytest.NewWasmVMContext.
// Compiling the module dominates the cost, so the caller may share vm
// between hosts: each Start creates a new plugin context in the same VM, as
// Envoy does when a configuration changes but the VM configuration does not.
// The caller closes vm.
func NewProxytestWasm(vm proxytest.WasmVMContext) Host {
	return &sdkHost{name: "proxytest-wasm", vm: vm}
}

func (h *sdkHost) Name() string { return h.name }

func (h *sdkHost) Start(config []byte) bool {
	if h.reset != nil {
		h.reset()
	}
	opt := proxytest.NewEmulatorOption().WithVMContext(h.vm).WithPluginConfiguration(config)
	h.host, h.reset = proxytest.NewHostEmulator(opt)
	if h.host.StartVM() != types.OnVMStartStatusOK {
		return false
	}
	return h.host.StartPlugin() == types.OnPluginStartStatusOK
}

func (h *sdkHost) Do(ex Exchange) Result {
	host := h.host
	id := host.InitializeHttpContext()
	res := h.do(host, id, ex)
	// proxytest's Wasm runner keeps what the module sent (a local reply,
	// headers) as slices of the module's memory, not copies as Envoy
	// does, and ending the context lets the module reuse that memory.
	res = res.clone()
	host.CompleteHttpContext(id)
	return res
}

func (h *sdkHost) do(host proxytest.HostEmulator, id uint32, ex Exchange) (res Result) {
	// The emulator keeps properties for its lifetime: each is reset to a
	// mark first, so what is read back is this exchange's.
	for name := range PropertyNames {
		host.SetProperty([]string{name}, unsetProperty)
	}
	defer func() { res.Properties = sdkProperties(host) }()

	action := host.CallOnRequestHeaders(id, ex.requestHeaders(), false)
	// What the upstream receives: each time the filter lets the buffered
	// data go (Continue), it is on its way and the next callback starts
	// a new buffer.
	var forwarded []byte
	for i, c := range ex.chunks() {
		if host.GetSentLocalResponse(id) != nil {
			break
		}
		action = host.CallOnRequestBody(id, c, i == len(ex.chunks())-1)
		if action == types.ActionContinue {
			forwarded = append(forwarded, host.GetCurrentRequestBody(id)...)
		}
	}

	if lr := host.GetSentLocalResponse(id); lr != nil {
		res.Local = &Local{Status: lr.StatusCode, Headers: lr.Headers, Body: lr.Data}
		res.RequestHeaders = host.GetCurrentRequestHeaders(id)
		// Envoy encodes a local reply through the filter chain's
		// response path, this filter included.
		host.CallOnResponseHeaders(id, append([][2]string{{":status", itoa(lr.StatusCode)}}, lr.Headers...), false)
		host.CallOnResponseBody(id, lr.Data, true)
		res.ResponseHeaders = host.GetCurrentResponseHeaders(id)
		res.ResponseBody = host.GetCurrentResponseBody(id)
		return res
	}
	if action != types.ActionContinue {
		// The filter holds the request and has not replied: a hang in Envoy.
		return res
	}
	res.Forwarded = true
	res.RequestHeaders = host.GetCurrentRequestHeaders(id)
	res.RequestBody = forwarded

	host.CallOnResponseHeaders(id, ex.responseHeaders(), len(ex.Upstream.Body) == 0)
	if len(ex.Upstream.Body) > 0 {
		host.CallOnResponseBody(id, ex.Upstream.Body, true)
	}
	res.ResponseHeaders = host.GetCurrentResponseHeaders(id)
	res.ResponseBody = host.GetCurrentResponseBody(id)
	return res
}

func (h *sdkHost) Counter(name string) (uint64, error)   { return h.host.GetCounterMetric(name) }
func (h *sdkHost) Histogram(name string) (uint64, error) { return h.host.GetHistogramMetric(name) }

func (h *sdkHost) Logs() []string {
	var out []string
	out = append(out, h.host.GetWarnLogs()...)
	out = append(out, h.host.GetErrorLogs()...)
	return append(out, h.host.GetCriticalLogs()...)
}

func (h *sdkHost) Close() {
	if h.reset != nil {
		h.reset()
		h.reset = nil
	}
}

// MemoryBytes returns the size of the module's linear memory. proxytest's
// Wasm runner keeps the module to itself, so this reads it through wazero's
// own structures by reflection (wazero v1.12's compiler engine): the
// exported function's module engine holds the module instance and its
// memory. Any change there gives an error, never a wrong size.
func (h *sdkHost) MemoryBytes() (n int, err error) {
	if _, ok := h.vm.(proxytest.WasmVMContext); !ok {
		return 0, errors.New("the filter runs natively: no linear memory")
	}
	defer func() {
		if recover() != nil {
			n, err = 0, errors.New("cannot reach the module's memory in proxytest's runner")
		}
	}()
	f := reflect.ValueOf(h.vm).Elem().FieldByName("abi").FieldByName("proxyOnVMStart")
	for _, name := range []string{"parent", "module", "MemoryInstance", "Buffer"} {
		for f.Kind() == reflect.Interface || f.Kind() == reflect.Pointer {
			f = f.Elem()
		}
		f = f.FieldByName(name)
	}
	return f.Len(), nil
}

// unsetProperty marks a property the exchange did not set.
var unsetProperty = []byte("\x00unset")

func sdkProperties(host proxytest.HostEmulator) map[string]string {
	props := map[string]string{}
	for name := range PropertyNames {
		if v, err := host.GetProperty([]string{name}); err == nil && string(v) != string(unsetProperty) {
			props[name] = string(v) // a copy: v may be the module's memory
		}
	}
	return props
}

// clone returns a deep copy of r that shares no memory with the host.
func (r Result) clone() Result {
	r.RequestHeaders = cloneHeaders(r.RequestHeaders)
	r.RequestBody = bytes.Clone(r.RequestBody)
	r.ResponseHeaders = cloneHeaders(r.ResponseHeaders)
	r.ResponseBody = bytes.Clone(r.ResponseBody)
	r.Properties = maps.Clone(r.Properties)
	if r.Local != nil {
		l := *r.Local
		l.Headers, l.Body = cloneHeaders(l.Headers), bytes.Clone(l.Body)
		r.Local = &l
	}
	return r
}

func cloneHeaders(h [][2]string) [][2]string {
	if h == nil {
		return nil
	}
	out := make([][2]string, len(h))
	for i, kv := range h {
		out[i] = [2]string{strings.Clone(kv[0]), strings.Clone(kv[1])}
	}
	return out
}
