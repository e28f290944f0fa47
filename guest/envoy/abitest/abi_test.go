package abitest

import (
	"encoding/json"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/banzaicloud/proxy-wasm-go-host/api"
	"github.com/proxy-wasm/proxy-wasm-go-sdk/proxywasm/proxytest"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/guest/envoy/filter"
	"github.com/ctxgate/ctxgate/internal/testenv"
)

// hostKind makes a fresh Host of one kind.
type hostKind struct {
	name string
	make func(t *testing.T) Host
}

// hostKinds returns the native run plus each built module (standard Go,
// and TinyGo when a toolchain is present) under both ABI hosts. A module
// that cannot be built is skipped with the reason, unless CI=true: there it
// is a failure. -short skips the TinyGo build (about 30 s when not cached).
func hostKinds(t *testing.T) []hostKind {
	kinds := []hostKind{{"proxytest-native", func(*testing.T) Host { return NewNative() }}}
	ci := testenv.InCI()
	mods := []*Module{}
	if mod, err := BuildGo(); err != nil {
		if ci {
			t.Fatalf("cannot build the filter module: %v", err)
		}
		t.Logf("go module skipped: cannot build it (CI=true makes this a failure): %v", err)
	} else {
		mods = append(mods, mod)
	}
	switch mod, err := BuildTinyGo(); {
	case testing.Short():
		t.Logf("tinygo module skipped in -short mode")
	case err != nil && ci:
		t.Fatalf("cannot build the TinyGo filter module: %v", err)
	case err != nil:
		t.Logf("tinygo module skipped (CI=true makes this a failure): %v", err)
	default:
		mods = append(mods, mod)
	}
	for _, mod := range mods {
		kinds = append(kinds,
			hostKind{"proxytest-wasm-" + mod.Name, func(t *testing.T) Host {
				vm, err := sharedProxytestVM(mod)
				if err != nil {
					t.Fatal(err)
				}
				return NewProxytestWasm(vm)
			}},
			hostKind{"banzaicloud-" + mod.Name, func(t *testing.T) Host {
				banzaiOnce.Do(func() { banzaiVM = NewBanzaiVM() })
				h, err := NewBanzai(banzaiVM, mod.Wasm)
				if err != nil {
					t.Fatal(err)
				}
				return h
			}},
		)
	}
	return kinds
}

// The compiled modules are shared by the whole test binary: compiling the
// module takes seconds, instantiating it (banzaicloud) or starting a new
// plugin context in it (proxytest) milliseconds.
var (
	sharedMu   sync.Mutex
	sharedPT   = map[string]proxytest.WasmVMContext{}
	banzaiOnce sync.Once
	banzaiVM   api.WasmVM
)

func sharedProxytestVM(mod *Module) (proxytest.WasmVMContext, error) {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if vm, ok := sharedPT[mod.Name]; ok {
		return vm, nil
	}
	vm, err := proxytest.NewWasmVMContext(mod.Wasm)
	if err != nil {
		return nil, err
	}
	sharedPT[mod.Name] = vm
	return vm, nil
}

// A group is one plugin configuration and the exchanges run under it.
type group struct {
	name   string
	policy string // preset the oracle decides with
	extra  string // more configuration members
	cases  []tcase
}

type tcase struct {
	name   string
	ex     func(t *testing.T) Exchange
	oracle bool // the core decides this body; checks get its decision
	// counters the exchange must increment (by one); every other counter
	// must stay. Computed from the oracle when nil and oracle is set.
	counters func(o *oracle) []string
	logs     int // warning lines the exchange must write
	check    func(t *testing.T, o *oracle, ex Exchange, r Result)
}

func groups() []group {
	return []group{
		{name: "default", policy: testPolicy, extra: `"max_body_bytes":65536`, cases: []tcase{
			{name: "inject", oracle: true, ex: chatEx("inject.json", 3, answer("At sea level water boils at 100 degrees Celsius [S1].")),
				counters: decided("answer.checked"), check: checkInjected("inject")},
			{name: "caveat", oracle: true, ex: chatEx("caveat.json", 1, answer("Water boils at 100 degrees Celsius on Earth [S1].")),
				counters: decided("answer.checked"), check: checkInjected("caveat")},
			{name: "hard refusal", oracle: true, ex: chatEx("refuse.json", 2, answer("never called")),
				counters: decided("refusal.hard"), check: checkRefused("application/json")},
			{name: "hard refusal streaming", oracle: true, ex: streaming(chatEx("refuse.json", 1, answer("never called"))),
				counters: decided("refusal.hard"), check: checkRefused("text/event-stream")},
			{name: "soft refusal", oracle: true, ex: chatEx("inject.json", 1, answer(softRefusalLine)),
				counters: decided("answer.checked", "refusal.soft"), check: checkInjected("inject")},
			{name: "unknown citation", oracle: true, ex: chatEx("inject.json", 1, answer("Water boils at 100 degrees Celsius [S1][S9]. Ice is cold.")),
				counters: decided("answer.checked", "answer.unknown_citations", "answer.uncited_sentences"), check: checkInjected("inject")},
			{name: "streamed answer", oracle: true, ex: chatEx("inject.json", 1, sse("data: {}\n\n")),
				counters: decided("answer.stream_unchecked"), check: checkInjected("inject")},
			{name: "extension field", oracle: true, ex: chatEx("extension.json", 1, answer("100 degrees Celsius [S1].")),
				counters: decided("answer.checked"), check: checkInjected("inject")},
			{name: "malformed JSON closed", ex: rawEx(`{"messages": [`, 1),
				counters: fixed("action.error", "error.bad_json"), logs: 1, check: checkErrorReply(400, "bad_json", "")},
			{name: "no user message closed", ex: rawEx(`{"messages":[{"role":"system","content":"x"}],"documents":[]}`, 1),
				counters: fixed("action.error", "error.bad_field"), logs: 1, check: checkErrorReply(422, "bad_field", "messages")},
			{name: "bad chunk field closed", ex: rawEx(`{"messages":[{"role":"user","content":"q"}],"documents":[{"id":"a","scores":{"vector":"high"}}]}`, 1),
				counters: fixed("action.error", "error.bad_field"), logs: 1, check: checkErrorReply(422, "bad_field", "documents[0].scores.vector")},
			{name: "no documents", ex: rawEx(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`, 1),
				counters: fixed("action.skip"), check: checkUntouched("skip")},
			{name: "other path", ex: func(t *testing.T) Exchange {
				ex := chatEx("inject.json", 1, answer("x"))(t)
				ex.Path = "/v1/embeddings"
				return ex
			}, counters: fixed(), check: checkUntouched("")},
			{name: "GET", ex: func(t *testing.T) Exchange {
				return Exchange{Method: "GET", Path: "/v1/chat/completions", Upstream: answer("x")}
			}, counters: fixed(), check: checkUntouched("")},
		}},
		{name: "wikigr", policy: "wikigr", cases: []tcase{
			{name: "fallback", oracle: true, ex: chatEx("fallback.json", 2, answer("Germany? I am not sure.")),
				counters: decided(), check: checkFallback},
			{name: "inject", oracle: true, ex: chatEx("inject.json", 1, answer("100 C [S1].")),
				counters: decided("answer.checked"), check: checkInjected("inject")},
		}},
		{name: "open", policy: testPolicy, extra: `"max_body_bytes":400,"on_oversize":"passthrough","fail_open":true`, cases: []tcase{
			{name: "oversize passthrough", ex: chatEx("inject.json", 3, answer("x")),
				counters: fixed("action.error", "error.limit"), logs: 1, check: checkPassedOpen("limit")},
			{name: "oversize by content-length passthrough", ex: withLength(chatEx("inject.json", 1, answer("x"))),
				counters: fixed("action.error", "error.limit"), logs: 1, check: checkPassedOpen("limit")},
			{name: "malformed JSON open", ex: rawEx(`{"messages": [`, 1),
				counters: fixed("action.error", "error.bad_json"), logs: 1, check: checkPassedOpen("bad_json")},
			{name: "within limit still gated", oracle: true, ex: chatEx("refuse.json", 1, answer("x")),
				counters: decided("refusal.hard"), check: checkRefused("application/json")},
		}},
		{name: "closed", policy: testPolicy, extra: `"max_body_bytes":400`, cases: []tcase{
			{name: "oversize rejected", ex: chatEx("inject.json", 3, answer("x")),
				counters: fixed("action.error", "error.limit"), logs: 1, check: checkErrorReply(413, "limit", "body")},
			{name: "oversize by content-length rejected", ex: withLength(chatEx("inject.json", 1, answer("x"))),
				counters: fixed("action.error", "error.limit"), logs: 1, check: checkErrorReply(413, "limit", "body")},
		}},
	}
}

// TestFilterABI runs every group through every host kind, then checks that
// all hosts produced the same bytes for the same exchange.
func TestFilterABI(t *testing.T) {
	type key struct{ group, tcase string }
	seen := map[key]struct {
		host string
		r    Result
	}{}
	for _, kind := range hostKinds(t) {
		t.Run(kind.name, func(t *testing.T) {
			for _, g := range groups() {
				t.Run(g.name, func(t *testing.T) {
					h := kind.make(t)
					defer h.Close()
					if !h.Start(policyConfig(t, g.policy, g.extra)) {
						t.Fatalf("plugin did not start: %q", h.Logs())
					}
					for _, c := range g.cases {
						t.Run(c.name, func(t *testing.T) {
							ex := c.ex(t)
							var o *oracle
							if c.oracle {
								o = decide(t, g.policy, ex.Body)
							}
							logs := len(h.Logs())
							before := counters(t, h)
							r := h.Do(ex)
							after := counters(t, h)
							checkCounters(t, before, after, c.counters(o))
							if got := h.Logs()[logs:]; len(got) != c.logs {
								t.Errorf("log lines = %q, want %d", got, c.logs)
							}
							if o != nil && o.Action != "" {
								if bp, err := h.Histogram(filter.MetricConfidenceBP); err != nil || bp != o.confidenceBP() {
									t.Errorf("confidence histogram = %d (%v), want %d", bp, err, o.confidenceBP())
								}
								if _, err := h.Histogram(filter.MetricGateTimeUS); err != nil {
									t.Errorf("gate time histogram: %v", err)
								}
							}
							c.check(t, o, ex, r)
							checkProperties(t, r)

							k := key{g.name, c.name}
							if prev, ok := seen[k]; ok {
								sameBytes(t, prev.host, prev.r, kind.name, r)
							} else {
								seen[k] = struct {
									host string
									r    Result
								}{kind.name, r}
							}
						})
					}
				})
			}
		})
	}
}

// TestBadConfigFailsStart: a bad configuration stops the plugin with one
// log line naming the field, in every host.
func TestBadConfigFailsStart(t *testing.T) {
	tests := []struct{ name, config, want string }{
		{"unknown field", `{"failopen":true}`, "ctxgate: plugin configuration: failopen: unknown field"},
		{"not JSON", `{"policy":`, "ctxgate: plugin configuration: (root): not JSON"},
		{"bad policy", `{"policy":{"name":"broken"}}`, "ctxgate: plugin configuration: policy: "},
		{"bundle without trust keys", `{"policy":{"ctxgate_bundle":1}}`, "trust_keys: the policy is a signed bundle"},
		{"unknown vector metric", `{"vector_metric":"ip"}`, "ctxgate: plugin configuration: vector_metric: must be"},
		{"a metric the policy cannot read", string(policyConfig(t, "wikigr", `"vector_metric":"dot"`)),
			`ctxgate: plugin configuration: vector_metric: dot scores have no cosine levels, and policy "wikigr" decides confidence by max_similarity`},
	}
	for _, kind := range hostKinds(t) {
		t.Run(kind.name, func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					h := kind.make(t)
					defer h.Close()
					if h.Start([]byte(tt.config)) {
						t.Fatal("plugin started with a bad configuration")
					}
					logs := h.Logs()
					if len(logs) != 1 || !strings.Contains(logs[0], tt.want) {
						t.Errorf("logs = %q, want one line containing %q", logs, tt.want)
					}
				})
			}
		})
	}
}

// ---- exchanges ----

func chatEx(file string, chunks int, up Upstream) func(t *testing.T) Exchange {
	return func(t *testing.T) Exchange {
		return Exchange{Body: body(t, file), Chunks: chunks, Upstream: up,
			Headers: [][2]string{{"content-type", "application/json"}}}
	}
}

func rawEx(b string, chunks int) func(t *testing.T) Exchange {
	return func(t *testing.T) Exchange {
		return Exchange{Body: []byte(b), Chunks: chunks, Upstream: answer("upstream answer"),
			Headers: [][2]string{{"content-type", "application/json"}}}
	}
}

func withLength(f func(t *testing.T) Exchange) func(t *testing.T) Exchange {
	return func(t *testing.T) Exchange {
		ex := f(t)
		ex.Headers = append(ex.Headers, [2]string{"content-length", strconv.Itoa(len(ex.Body))})
		return ex
	}
}

// streaming sets "stream": true in the request.
func streaming(f func(t *testing.T) Exchange) func(t *testing.T) Exchange {
	return func(t *testing.T) Exchange {
		ex := f(t)
		var m map[string]any
		if err := json.Unmarshal(ex.Body, &m); err != nil {
			t.Fatal(err)
		}
		m["stream"] = true
		ex.Body, _ = json.Marshal(m)
		return ex
	}
}

const softRefusalLine = "I don't have enough information to answer this from the provided sources."

func answer(content string) Upstream {
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o-mini",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": content}}},
	})
	return Upstream{Headers: [][2]string{{"content-type", "application/json"}}, Body: b}
}

func sse(data string) Upstream {
	return Upstream{Headers: [][2]string{{"content-type", "text/event-stream"}}, Body: []byte(data)}
}

// ---- counters ----

var counterNames = func() []string {
	var out []string
	add := func(prefix string, names ...string) {
		for _, n := range names {
			out = append(out, prefix+n)
		}
	}
	add(filter.MetricActionPrefix, "inject", "caveat", "fallback", "refuse", "error", "skip")
	add(filter.MetricLevelPrefix, "sufficient", "partial", "insufficient")
	add(filter.MetricRefusalPrefix, "hard", "soft")
	add(filter.MetricErrorPrefix, "bad_json", "bad_field", "limit", "bad_policy", "internal")
	return append(out, filter.MetricRequests, filter.MetricAnswersChecked, filter.MetricAnswerUnknown,
		filter.MetricAnswerUncited, filter.MetricAnswerStream)
}()

func counters(t *testing.T, h Host) map[string]uint64 {
	m := map[string]uint64{}
	for _, n := range counterNames {
		v, err := h.Counter(n)
		if err != nil {
			t.Fatalf("counter %s: %v", n, err)
		}
		m[n] = v
	}
	return m
}

func checkCounters(t *testing.T, before, after map[string]uint64, want []string) {
	t.Helper()
	wantSet := map[string]bool{}
	for _, n := range want {
		wantSet["ctxgate."+n] = true
	}
	for _, n := range counterNames {
		d := after[n] - before[n]
		if wantSet[n] && d != 1 {
			t.Errorf("counter %s changed by %d, want 1", n, d)
		}
		if !wantSet[n] && d != 0 {
			t.Errorf("counter %s changed by %d, want 0", n, d)
		}
	}
}

// fixed lists the counters an exchange increments.
func fixed(names ...string) func(*oracle) []string {
	return func(*oracle) []string { return names }
}

// decided adds the counters of the oracle's decision.
func decided(names ...string) func(*oracle) []string {
	return func(o *oracle) []string {
		return append([]string{"requests", "action." + o.Action, "level." + o.Level}, names...)
	}
}

// ---- checks ----

type chatBody struct {
	Messages []struct {
		Role, Name string
		Content    json.RawMessage
	}
	Documents json.RawMessage
	Ctxgate   json.RawMessage
}

func parseBody(t *testing.T, b []byte) chatBody {
	t.Helper()
	var c chatBody
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("forwarded body is not JSON: %v\n%s", err, b)
	}
	return c
}

func contentString(t *testing.T, raw json.RawMessage) string {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("content %s is not a string", raw)
	}
	return s
}

func checkInjected(action string) func(t *testing.T, o *oracle, ex Exchange, r Result) {
	return func(t *testing.T, o *oracle, ex Exchange, r Result) {
		if o.Action != action {
			t.Fatalf("the core decides %q for this body; the case expects %q", o.Action, action)
		}
		if !r.Forwarded {
			t.Fatalf("request not forwarded; local reply %+v", r.Local)
		}
		fwd := parseBody(t, r.RequestBody)
		if fwd.Documents != nil || fwd.Ctxgate != nil {
			t.Errorf("forwarded body keeps the raw documents: %s", r.RequestBody)
		}
		orig := parseBody(t, ex.Body)
		if len(fwd.Messages) != len(orig.Messages)+1 {
			t.Fatalf("messages: %d forwarded, %d sent; want one system message more", len(fwd.Messages), len(orig.Messages))
		}
		last := len(fwd.Messages) - 1
		sys := fwd.Messages[last-1]
		if sys.Role != "system" {
			t.Fatalf("message before the question has role %q, want system", sys.Role)
		}
		text := contentString(t, sys.Content)
		if text != o.systemText() {
			t.Errorf("system message =\n%q\nwant\n%q", text, o.systemText())
		}
		// The <sources> block, byte for byte as the core wrote it.
		if !strings.Contains(text, o.Prompt.Sources) || !strings.HasPrefix(o.Prompt.Sources, "<sources>") {
			t.Errorf("system message does not carry the core's <sources> block %q", o.Prompt.Sources)
		}
		if string(fwd.Messages[last].Content) != string(orig.Messages[len(orig.Messages)-1].Content) {
			t.Errorf("question changed: %s", fwd.Messages[last].Content)
		}
		if _, ok := Header(r.RequestHeaders, "content-length"); ok {
			t.Errorf("content-length kept on a rewritten body")
		}
		wantHeaders(t, "upstream request", r.RequestHeaders, o.headers())
		resp := o.headers()
		if ct, _ := Header(ex.Upstream.Headers, "content-type"); ct == "text/event-stream" {
			resp = append(resp, "x-ctxgate-answer-check: skipped-stream")
		} else {
			resp = append(resp, answerHeaders(t, o, ex.Upstream.Body)...)
		}
		wantHeaders(t, "client response", r.ResponseHeaders, resp)
		if string(r.ResponseBody) != string(ex.Upstream.Body) {
			t.Errorf("response body changed")
		}
	}
}

// answerHeaders computes, with the core natively, the headers the answer
// check must report for an upstream chat.completion body.
func answerHeaders(t *testing.T, o *oracle, body []byte) []string {
	var c struct {
		Choices []struct{ Message struct{ Content string } }
	}
	if err := json.Unmarshal(body, &c); err != nil || len(c.Choices) == 0 {
		t.Fatalf("bad upstream body in test: %s", body)
	}
	v := o.engine.Check(&gate.Answer{Answer: c.Choices[0].Message.Content, Tags: o.tags()})
	h := []string{"x-ctxgate-answer-check: ok", "x-ctxgate-soft-refusal: " + strconv.FormatBool(v.SoftRefusal),
		"x-ctxgate-uncited-sentences: " + strconv.Itoa(len(v.UncitedSentences))}
	if len(v.Unknown) > 0 {
		h = append(h, "x-ctxgate-unknown-citations: "+strings.Join(v.Unknown, ","))
	}
	return h
}

func checkFallback(t *testing.T, o *oracle, ex Exchange, r Result) {
	if o.Action != "fallback" || o.Prompt == nil || o.Prompt.Minimal == "" {
		t.Fatalf("the core decides %q (prompt %+v) for this body; the case expects a fallback with a minimal prompt", o.Action, o.Prompt)
	}
	if !r.Forwarded {
		t.Fatalf("request not forwarded")
	}
	fwd := parseBody(t, r.RequestBody)
	orig := parseBody(t, ex.Body)
	if fwd.Documents != nil {
		t.Errorf("forwarded body keeps the documents")
	}
	if len(fwd.Messages) != len(orig.Messages) {
		t.Fatalf("fallback changed the number of messages")
	}
	if got := contentString(t, fwd.Messages[len(fwd.Messages)-1].Content); got != o.Prompt.Minimal {
		t.Errorf("user content = %q, want the minimal prompt %q", got, o.Prompt.Minimal)
	}
	wantHeaders(t, "upstream request", r.RequestHeaders, o.headers())
	// No sources were offered, so there is no answer to check.
	wantHeaders(t, "client response", r.ResponseHeaders, o.headers())
}

func checkRefused(ctype string) func(t *testing.T, o *oracle, ex Exchange, r Result) {
	return func(t *testing.T, o *oracle, ex Exchange, r Result) {
		if o.Action != "refuse" || o.Refusal == nil || o.Refusal.Type != "hard" {
			t.Fatalf("the core decides %q for this body; the case expects a hard refusal", o.Action)
		}
		if r.Forwarded || r.Local == nil {
			t.Fatalf("a hard refusal must be answered locally; forwarded=%v", r.Forwarded)
		}
		if r.Local.Status != 200 {
			t.Errorf("status %d, want 200", r.Local.Status)
		}
		if got, _ := Header(r.Local.Headers, "content-type"); got != ctype {
			t.Errorf("content-type %q, want %q", got, ctype)
		}
		want := append(o.headers(), "x-ctxgate-refusal: hard")
		wantHeaders(t, "local reply", r.Local.Headers, want)
		wantHeaders(t, "client response", r.ResponseHeaders, want)
		wantHeaders(t, "request held by the host", r.RequestHeaders, want)
		content := ""
		if ctype == "text/event-stream" {
			events := strings.Split(strings.TrimSuffix(string(r.Local.Body), "\n\n"), "\n\n")
			if len(events) != 3 || events[2] != "data: [DONE]" {
				t.Fatalf("stream = %q", r.Local.Body)
			}
			var c struct {
				Object  string
				Choices []struct{ Delta struct{ Content string } }
			}
			if err := json.Unmarshal([]byte(strings.TrimPrefix(events[0], "data: ")), &c); err != nil || c.Object != "chat.completion.chunk" {
				t.Fatalf("first event %q: %v", events[0], err)
			}
			content = c.Choices[0].Delta.Content
		} else {
			var c struct {
				Object, Model string
				Choices       []struct {
					Message struct{ Role, Content string }
				}
			}
			if err := json.Unmarshal(r.Local.Body, &c); err != nil || c.Object != "chat.completion" || len(c.Choices) != 1 {
				t.Fatalf("reply %s: %v", r.Local.Body, err)
			}
			if c.Model != "gpt-4o-mini" || c.Choices[0].Message.Role != "assistant" {
				t.Errorf("reply %s", r.Local.Body)
			}
			content = c.Choices[0].Message.Content
		}
		if content != o.Refusal.Message {
			t.Errorf("refusal message %q, want the core's %q", content, o.Refusal.Message)
		}
	}
}

func checkErrorReply(status uint32, code, field string) func(t *testing.T, o *oracle, ex Exchange, r Result) {
	return func(t *testing.T, _ *oracle, ex Exchange, r Result) {
		if r.Forwarded || r.Local == nil {
			t.Fatalf("failing closed must answer locally; forwarded=%v", r.Forwarded)
		}
		if r.Local.Status != status {
			t.Errorf("status %d, want %d", r.Local.Status, status)
		}
		var e struct {
			Error struct{ Code, Message, Field string }
		}
		if err := json.Unmarshal(r.Local.Body, &e); err != nil {
			t.Fatalf("error body %s: %v", r.Local.Body, err)
		}
		if e.Error.Code != code || e.Error.Field != field || e.Error.Message == "" {
			t.Errorf("error = %+v, want code %q field %q", e.Error, code, field)
		}
		want := []string{"x-ctxgate-action: error", "x-ctxgate-error: " + code}
		wantHeaders(t, "local reply", r.Local.Headers, want)
		wantHeaders(t, "client response", r.ResponseHeaders, want)
		wantHeaders(t, "request held by the host", r.RequestHeaders, want)
	}
}

func checkPassedOpen(code string) func(t *testing.T, o *oracle, ex Exchange, r Result) {
	return func(t *testing.T, _ *oracle, ex Exchange, r Result) {
		if !r.Forwarded {
			t.Fatalf("failing open must forward; local reply %+v", r.Local)
		}
		if string(r.RequestBody) != string(ex.Body) {
			t.Errorf("body changed when passing through:\n%s", r.RequestBody)
		}
		want := []string{"x-ctxgate-action: error", "x-ctxgate-error: " + code}
		wantHeaders(t, "upstream request", r.RequestHeaders, want)
		wantHeaders(t, "client response", r.ResponseHeaders, want)
		if cl, ok := Header(ex.Headers, "content-length"); ok {
			if got, _ := Header(r.RequestHeaders, "content-length"); got != cl {
				t.Errorf("content-length %q, want the client's %q", got, cl)
			}
		}
	}
}

func checkUntouched(action string) func(t *testing.T, o *oracle, ex Exchange, r Result) {
	return func(t *testing.T, _ *oracle, ex Exchange, r Result) {
		if !r.Forwarded {
			t.Fatalf("not forwarded")
		}
		if string(r.RequestBody) != string(ex.Body) {
			t.Errorf("body changed:\n%s", r.RequestBody)
		}
		var want []string
		if action != "" {
			want = []string{"x-ctxgate-action: " + action}
		}
		wantHeaders(t, "upstream request", r.RequestHeaders, want)
		wantHeaders(t, "client response", r.ResponseHeaders, want)
	}
}

func wantHeaders(t *testing.T, where string, h [][2]string, want []string) {
	t.Helper()
	want = append([]string(nil), want...)
	sort.Strings(want)
	if got := CtxgateHeaders(h); !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Errorf("%s x-ctxgate headers =\n  %q\nwant\n  %q", where, got, want)
	}
}

// checkProperties: the filter publishes the decision (and the answer
// check) as properties, Envoy's filter state for its tracers and access
// logs, for every outcome: each is the value of the x-ctxgate-* header it
// mirrors in the client's response, and none is set without it.
func checkProperties(t *testing.T, r Result) {
	t.Helper()
	want := map[string]string{}
	for name, header := range PropertyNames {
		for _, h := range r.ResponseHeaders {
			if strings.EqualFold(h[0], header) && h[1] != "" {
				want[name] = h[1]
			}
		}
	}
	if !reflect.DeepEqual(r.Properties, want) {
		t.Errorf("properties =\n  %v\nwant (the response's x-ctxgate headers)\n  %v", r.Properties, want)
	}
}

// sameBytes: the same exchange gives the same bytes in every host.
func sameBytes(t *testing.T, hostA string, a Result, hostB string, b Result) {
	t.Helper()
	if a.Forwarded != b.Forwarded || string(a.RequestBody) != string(b.RequestBody) {
		t.Errorf("forwarded body differs between %s and %s:\n%s\n%s", hostA, hostB, a.RequestBody, b.RequestBody)
	}
	if (a.Local == nil) != (b.Local == nil) {
		t.Fatalf("local reply in one host only (%s vs %s)", hostA, hostB)
	}
	if a.Local != nil && (a.Local.Status != b.Local.Status || string(a.Local.Body) != string(b.Local.Body)) {
		t.Errorf("local reply differs between %s and %s:\n%d %s\n%d %s", hostA, hostB, a.Local.Status, a.Local.Body, b.Local.Status, b.Local.Body)
	}
	if !reflect.DeepEqual(CtxgateHeaders(a.RequestHeaders), CtxgateHeaders(b.RequestHeaders)) ||
		!reflect.DeepEqual(CtxgateHeaders(a.ResponseHeaders), CtxgateHeaders(b.ResponseHeaders)) {
		t.Errorf("x-ctxgate headers differ between %s and %s", hostA, hostB)
	}
	if !reflect.DeepEqual(a.Properties, b.Properties) {
		t.Errorf("properties differ between %s and %s: %v, %v", hostA, hostB, a.Properties, b.Properties)
	}
}
