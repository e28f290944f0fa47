package abitest

import (
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
	defer host.CompleteHttpContext(id)
	var res Result

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
