package abitest

import (
	"bytes"
	"context"
	"errors"
	"strings"

	"github.com/banzaicloud/proxy-wasm-go-host/abi"
	"github.com/banzaicloud/proxy-wasm-go-host/api"
	bwazero "github.com/banzaicloud/proxy-wasm-go-host/runtime/wazero"
	"github.com/go-logr/logr"
)

// banzaiHost runs the built module under github.com/banzaicloud/proxy-wasm-go-host
// (runtime/wazero): an ABI host written independently of the SDK, so a
// decision both hosts agree on does not rest on one implementation's reading
// of the ABI. The library leaves the host callbacks to its user; imports
// below implements the ones the filter calls, with Envoy's semantics.
type banzaiHost struct {
	vm     api.WasmVM
	inst   api.WasmInstance
	abiCtx api.ABIContext
	im     *imports
	rootID int32
	nextID int32
}

// NewBanzaiVM returns the library's wazero VM. Its compilation cache makes
// every module after the first cheap, so tests share one VM between hosts.
func NewBanzaiVM() api.WasmVM {
	return bwazero.NewVM(context.Background(), bwazero.VMWithLogger(logr.Discard()))
}

// NewBanzai instantiates the module in vm (running _initialize).
func NewBanzai(vm api.WasmVM, wasm []byte) (Host, error) {
	mod, err := vm.NewModule(wasm)
	if err != nil {
		return nil, err
	}
	inst, err := mod.NewInstance()
	if err != nil {
		return nil, err
	}
	if err := inst.Start(); err != nil {
		return nil, err
	}
	h := &banzaiHost{vm: vm, inst: inst, im: newImports(), nextID: 1}
	// The exports are looked up when the context is made, so only after
	// Start; the host callbacks find their handler through the instance.
	h.abiCtx = abi.NewContext(h.im, inst)
	inst.SetData(h.abiCtx)
	return h, nil
}

func (h *banzaiHost) Name() string { return "banzaicloud-wazero" }

func (h *banzaiHost) Start(config []byte) bool {
	h.im.pluginConfig = config
	h.rootID = h.nextID
	h.nextID++
	ex := h.abiCtx.GetExports()
	if err := ex.ProxyOnContextCreate(h.rootID, 0); err != nil {
		h.im.logf("host: proxy_on_context_create: " + err.Error())
		return false
	}
	if ok, err := ex.ProxyOnVmStart(h.rootID, 0); err != nil || !ok {
		return false
	}
	ok, err := ex.ProxyOnConfigure(h.rootID, int32(len(config)))
	return err == nil && ok
}

func (h *banzaiHost) Do(ex Exchange) (res Result) {
	exp := h.abiCtx.GetExports()
	im := h.im
	im.beginStream()
	id := h.nextID
	h.nextID++
	defer func() { res.Properties = im.props }()
	must := func(a api.Action, err error) api.Action {
		if err != nil {
			im.logf("host: guest trapped: " + err.Error())
		}
		return a
	}
	if err := exp.ProxyOnContextCreate(id, h.rootID); err != nil {
		im.logf("host: proxy_on_context_create: " + err.Error())
		return res
	}
	defer func() {
		exp.ProxyOnLog(id)
		exp.ProxyOnDelete(id)
	}()

	im.reqHeaders = newHeaderMap(ex.requestHeaders())
	action := must(exp.ProxyOnRequestHeaders(id, int32(im.reqHeaders.len()), 0))
	// Envoy's buffering: while the filter pauses, chunks accumulate and each
	// callback sees the whole buffer; on Continue the buffer moves on.
	var forwarded []byte
	chunks := ex.chunks()
	for i, c := range chunks {
		if im.local != nil {
			break
		}
		im.reqBody.Write(c)
		action = must(exp.ProxyOnRequestBody(id, int32(im.reqBody.Len()), boolArg(i == len(chunks)-1)))
		if action == api.ActionContinue && im.local == nil {
			forwarded = append(forwarded, im.reqBody.Bytes()...)
			im.reqBody.Reset()
		}
	}

	if im.local != nil {
		res.Local = im.local
		res.RequestHeaders = im.reqHeaders.pairs()
		im.respHeaders = newHeaderMap(append([][2]string{{":status", itoa(im.local.Status)}}, im.local.Headers...))
		must(exp.ProxyOnResponseHeaders(id, int32(im.respHeaders.len()), 0))
		im.respBody.Write(im.local.Body)
		must(exp.ProxyOnResponseBody(id, int32(im.respBody.Len()), 1))
		res.ResponseHeaders = im.respHeaders.pairs()
		res.ResponseBody = append([]byte(nil), im.respBody.Bytes()...)
		return res
	}
	if action != api.ActionContinue {
		return res
	}
	res.Forwarded = true
	res.RequestHeaders = im.reqHeaders.pairs()
	res.RequestBody = forwarded

	im.respHeaders = newHeaderMap(ex.responseHeaders())
	must(exp.ProxyOnResponseHeaders(id, int32(im.respHeaders.len()), boolArg(len(ex.Upstream.Body) == 0)))
	if len(ex.Upstream.Body) > 0 {
		im.respBody.Write(ex.Upstream.Body)
		must(exp.ProxyOnResponseBody(id, int32(im.respBody.Len()), 1))
	}
	res.ResponseHeaders = im.respHeaders.pairs()
	res.ResponseBody = append([]byte(nil), im.respBody.Bytes()...)
	return res
}

func (h *banzaiHost) Counter(name string) (uint64, error) {
	return h.im.metric(name, api.MetricTypeCounter)
}

func (h *banzaiHost) Histogram(name string) (uint64, error) {
	return h.im.metric(name, api.MetricTypeHistogram)
}

func (h *banzaiHost) Logs() []string { return append([]string(nil), h.im.logs...) }

func (h *banzaiHost) Close() { h.inst.Stop() }

func boolArg(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

// imports is the host side of the ABI for banzaiHost: Envoy's behaviour for
// the calls the filter makes. Unimplemented calls fall back to the
// library's defaults (which answer "unimplemented").
type imports struct {
	abi.DefaultImportsHandler
	pluginConfig []byte

	reqHeaders, respHeaders *headerMap
	reqBody, respBody       *bytes.Buffer
	local                   *Local

	props map[string]string // the exchange's properties (proxy_set_property)

	metricNames []string
	metricTypes []api.MetricType
	metricVals  []int64
	logs        []string
}

func newImports() *imports {
	im := &imports{}
	im.beginStream()
	return im
}

func (im *imports) beginStream() {
	im.reqHeaders, im.respHeaders = newHeaderMap(nil), newHeaderMap(nil)
	im.reqBody, im.respBody = new(bytes.Buffer), new(bytes.Buffer)
	im.local = nil
	im.props = map[string]string{}
}

// SetProperty keeps a property for the exchange, as Envoy keeps it in the
// stream's filter state (a path of one segment; Envoy joins longer ones).
func (im *imports) SetProperty(key, value string) api.WasmResult {
	im.props[key] = value
	return api.WasmResultOk
}

func (im *imports) logf(s string) { im.logs = append(im.logs, s) }

func (im *imports) Log(level api.LogLevel, msg string) api.WasmResult {
	if level >= api.LogLevelWarning {
		im.logs = append(im.logs, msg)
	}
	return api.WasmResultOk
}

func (im *imports) GetPluginConfig() api.IoBuffer { return bytes.NewBuffer(im.pluginConfig) }
func (im *imports) GetVmConfig() api.IoBuffer     { return new(bytes.Buffer) }

func (im *imports) SetEffectiveContextID(int32) api.WasmResult { return api.WasmResultOk }

func (im *imports) GetHttpRequestHeader() api.HeaderMap  { return im.reqHeaders }
func (im *imports) GetHttpResponseHeader() api.HeaderMap { return im.respHeaders }
func (im *imports) GetHttpRequestBody() api.IoBuffer     { return im.reqBody }
func (im *imports) GetHttpResponseBody() api.IoBuffer    { return im.respBody }
func (im *imports) ResumeHttpRequest() api.WasmResult    { return api.WasmResultOk }
func (im *imports) ResumeHttpResponse() api.WasmResult   { return api.WasmResultOk }

func (im *imports) SendHttpResp(code int32, _ api.IoBuffer, body api.IoBuffer, headers api.HeaderMap, _ int32) api.WasmResult {
	l := &Local{Status: uint32(code), Body: append([]byte(nil), body.Bytes()...)}
	// The library decodes the header pairs into a Go map, so their order is
	// lost; sort them for a stable result.
	var keys []string
	headers.Range(func(k, _ string) bool { keys = append(keys, k); return true })
	sortStrings(keys)
	for _, k := range keys {
		v, _ := headers.Get(k)
		l.Headers = append(l.Headers, [2]string{k, v})
	}
	im.local = l
	return api.WasmResultOk
}

func (im *imports) DefineMetric(t api.MetricType, name string) (int32, api.WasmResult) {
	for i, n := range im.metricNames {
		if n == name {
			return int32(i), api.WasmResultOk
		}
	}
	im.metricNames = append(im.metricNames, name)
	im.metricTypes = append(im.metricTypes, t)
	im.metricVals = append(im.metricVals, 0)
	return int32(len(im.metricNames) - 1), api.WasmResultOk
}

func (im *imports) IncrementMetric(id int32, offset int64) api.WasmResult {
	if id < 0 || int(id) >= len(im.metricVals) || im.metricTypes[id] == api.MetricTypeHistogram {
		return api.WasmResultBadArgument
	}
	im.metricVals[id] += offset
	return api.WasmResultOk
}

func (im *imports) RecordMetric(id int32, value int64) api.WasmResult {
	if id < 0 || int(id) >= len(im.metricVals) {
		return api.WasmResultBadArgument
	}
	im.metricVals[id] = value
	return api.WasmResultOk
}

func (im *imports) GetMetric(id int32) (int64, api.WasmResult) {
	if id < 0 || int(id) >= len(im.metricVals) {
		return 0, api.WasmResultBadArgument
	}
	return im.metricVals[id], api.WasmResultOk
}

func (im *imports) metric(name string, t api.MetricType) (uint64, error) {
	for i, n := range im.metricNames {
		if n == name {
			if im.metricTypes[i] != t {
				return 0, errors.New(name + " has another metric type")
			}
			return uint64(im.metricVals[i]), nil
		}
	}
	return 0, errors.New(name + " not defined")
}

// headerMap is an ordered, case-insensitive header map (Envoy lower-cases
// names; order is kept so forwarded headers read as sent).
type headerMap struct{ kv [][2]string }

func newHeaderMap(pairs [][2]string) *headerMap {
	m := &headerMap{}
	for _, p := range pairs {
		m.kv = append(m.kv, [2]string{strings.ToLower(p[0]), p[1]})
	}
	return m
}

func (m *headerMap) len() int             { return len(m.kv) }
func (m *headerMap) pairs() [][2]string   { return append([][2]string(nil), m.kv...) }
func (m *headerMap) Clone() api.HeaderMap { return &headerMap{kv: m.pairs()} }

func (m *headerMap) Get(key string) (string, bool) {
	key = strings.ToLower(key)
	for _, p := range m.kv {
		if p[0] == key {
			return p[1], true
		}
	}
	return "", false
}

func (m *headerMap) Set(key, value string) {
	key = strings.ToLower(key)
	for i, p := range m.kv {
		if p[0] == key {
			m.kv[i][1] = value
			return
		}
	}
	m.kv = append(m.kv, [2]string{key, value})
}

func (m *headerMap) Add(key, value string) {
	m.kv = append(m.kv, [2]string{strings.ToLower(key), value})
}

func (m *headerMap) Del(key string) {
	key = strings.ToLower(key)
	out := m.kv[:0]
	for _, p := range m.kv {
		if p[0] != key {
			out = append(out, p)
		}
	}
	m.kv = out
}

func (m *headerMap) Range(f func(key, value string) bool) {
	for _, p := range m.kv {
		if !f(p[0], p[1]) {
			return
		}
	}
}

func (m *headerMap) ByteSize() uint64 {
	var n uint64
	for _, p := range m.kv {
		n += uint64(len(p[0]) + len(p[1]))
	}
	return n
}

// MemoryBytes returns the size of the module's linear memory.
func (h *banzaiHost) MemoryBytes() (int, error) {
	inst, ok := h.inst.(interface {
		GetExportsMem(name string) ([]byte, error)
	})
	if !ok {
		return 0, errors.New("the instance does not expose its memory")
	}
	mem, err := inst.GetExportsMem("memory")
	return len(mem), err
}
