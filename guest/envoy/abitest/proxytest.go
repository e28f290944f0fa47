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
	wasm  proxytest.WasmVMContext
	host  proxytest.HostEmulator
	reset func()
}

// NewNative runs the filter package directly under proxytest.
func NewNative() Host { return &sdkHost{name: "proxytest-native", vm: filter.NewVMContext()} }

// NewProxytestWasm runs the built module under proxytest.NewWasmVMContext.
func NewProxytestWasm(wasm []byte) (Host, error) {
	vm, err := proxytest.NewWasmVMContext(wasm)
	if err != nil {
		return nil, err
	}
	return &sdkHost{name: "proxytest-wasm", vm: vm, wasm: vm}, nil
}

func (h *sdkHost) Name() string { return h.name }

func (h *sdkHost) Start(config []byte) bool {
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
	for i, c := range ex.chunks() {
		if host.GetSentLocalResponse(id) != nil {
			break
		}
		action = host.CallOnRequestBody(id, c, i == len(ex.chunks())-1)
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
	res.RequestBody = host.GetCurrentRequestBody(id)

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
	}
	if h.wasm != nil {
		h.wasm.Close()
	}
}
