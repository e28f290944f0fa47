package gate

import (
	"unsafe"

	"github.com/ctxgate/ctxgate/gate/jsonx"
	"github.com/ctxgate/ctxgate/policies"
)

// Version is the gate's release version; SchemaVersion is the version of the
// request/decision wire format (docs/decision.md). Bump SchemaVersion on any
// change a host could notice.
const (
	Version       = "0.1.0"
	SchemaVersion = "1"
)

// Engine is one policy made ready for evaluation. It is deterministic and does
// no I/O. It is not safe for concurrent use, because it reuses scratch buffers
// between calls: hosts keep one Engine per Wasm instance or goroutine.
type Engine struct {
	policy *Policy
	ref    PolicyRef

	// The request's parse tree, reused between calls (decode_request.go),
	// and the engine-owned Request with its memory (decode_direct.go).
	parser jsonx.Parser
	reqMem requestMemory

	// Scratch reused between decisions (never shared with a Decision).
	work       []chunkWork
	toks       []token
	qtext      []byte
	qends      []int
	q          queryInfo
	signals    []Signal
	order, tmp []int
	keys       []float64
	f1, f2     []float64
	f3, f4     []float64
	rag        *RAGConfidence // this decision's rag_confidence, nil when not reported
	feat       [nFeatures]float64
	buf        []byte
	lowConf    bool
	missing    []string // these three are handed to the Decision: never reused
	factors    []string
	recs       []string

	// Evaluate's decision is encoded at once, so its prompt's sources block
	// is written from the chunks straight into the JSON (encode_sources.go).
	later sourcesLater

	// The answer check's tables and lists (answer_scan.go).
	ans answerMemory
}

// Policy returns the engine's validated policy. Callers must not modify it.
func (e *Engine) Policy() *Policy { return e.policy }

// Ref names the engine's policy (name, version, sha256).
func (e *Engine) Ref() PolicyRef { return e.ref }

// NewEngine validates a policy document and returns an engine for it. An
// empty policyJSON selects the built-in default policy (policies/default.json).
func NewEngine(policyJSON []byte) (*Engine, error) {
	if len(policyJSON) == 0 {
		policyJSON = policies.Default()
	}
	p, ref, err := decodePolicy(policyJSON)
	if err != nil {
		return nil, err
	}
	return &Engine{policy: p, ref: ref}, nil
}

// NewEngineFromPolicy returns an engine for a policy built in code. It is
// validated; its sha256 is the given ref's (a Go-built policy has no JSON
// document to hash).
func NewEngineFromPolicy(p *Policy, ref PolicyRef) (*Engine, error) {
	if p == nil {
		return nil, errorf(CodeBadPolicy, "", "policy is nil")
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if ref.Name == "" {
		ref.Name, ref.Version = p.Name, p.Version
	}
	return &Engine{policy: p, ref: ref}, nil
}

// Evaluate decodes a request, decides, and returns the decision JSON. The
// bytes are identical for identical (policy, request) in every build.
func (e *Engine) Evaluate(requestJSON []byte) ([]byte, error) {
	req, err := e.decodeRequest(requestJSON)
	if err != nil {
		return nil, err
	}
	return e.appendDecided(nil, req, requestJSON)
}

// AppendEvaluateInPlace is Evaluate for a caller that owns requestJSON and
// is done with it (a Wasm guest's reused input buffer): the request is
// decoded where it is (DecodeRequestInPlace; requestJSON is modified) and
// the decision appended to dst, so a host keeping one output buffer makes
// no decision-sized allocation per call. On error dst is returned as it was.
func (e *Engine) AppendEvaluateInPlace(dst, requestJSON []byte) ([]byte, error) {
	req, err := e.DecodeRequestInPlace(requestJSON)
	if err != nil {
		return dst, err
	}
	return e.appendDecided(dst, req, requestJSON)
}

// appendDecided appends req's decision JSON (req decoded from data just
// now: its limits were checked by the decoder), writing the prompt's sources
// block from the chunks straight into dst rather than building it as a
// string first (encode_sources.go); Decide's prompt keeps the string. When
// the direct decoder read req into the engine's memory (the tree decoder's
// Request is its own), the texts it found as the encoder would write them
// are copied from data: nothing but decide runs between that decode and
// this encode, and decide changes neither the texts nor data. Unless dst's
// array overlaps data: a caller may write the decision over the request it
// is done with, and the copies would then read the decision's own bytes.
func (e *Engine) appendDecided(dst []byte, req *Request, data []byte) ([]byte, error) {
	e.ans.trim() // a large answer's memory is not kept for requests
	e.later.on = true
	d, err := e.decide(req)
	e.later.on = false
	if err != nil {
		return dst, err
	}
	if req == &e.reqMem.req && !overlaps(dst, data) {
		e.later.src, e.later.mem = data, &e.reqMem
	}
	return e.later.appendDecision(dst, d), nil
}

// overlaps reports whether appending to dst may write over any byte of data
// (dst's whole capacity counts: an append writes there without growing).
func overlaps(dst, data []byte) bool {
	if cap(dst) == 0 || len(data) == 0 {
		return false
	}
	d := uintptr(unsafe.Pointer(unsafe.SliceData(dst)))
	s := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	return d < s+uintptr(len(data)) && s < d+uintptr(cap(dst))
}

// Decide is Evaluate without the JSON: for Go hosts that build requests in code.
// The policy's input limits apply here too (DecodeRequest enforces them for
// JSON requests), so a Go host cannot hand the engine more than a JSON one.
func (e *Engine) Decide(req *Request) (*Decision, error) {
	if req != nil {
		if err := checkLimits(req, &e.policy.Limits); err != nil {
			return nil, err
		}
	}
	return e.decide(req)
}

// Validate checks a model's answer after generation (input: {"answer": "...",
// "tags": ["S1",...]}) and returns the validation JSON.
func (e *Engine) Validate(answerJSON []byte) ([]byte, error) {
	return e.appendValidate(nil, answerJSON, false)
}

// AppendValidateInPlace is Validate for a caller that owns answerJSON and is
// done with it (a Wasm guest's reused input buffer): the answer is parsed
// where it is, not copied (answerJSON is modified), and the result appended
// to dst. With a reused dst a call then allocates nothing answer-sized: a
// TinyGo module checking multi-megabyte answers one after another otherwise
// fragments its heap until an allocation finds no room and the module traps.
func (e *Engine) AppendValidateInPlace(dst, answerJSON []byte) ([]byte, error) {
	return e.appendValidate(dst, answerJSON, true)
}

func (e *Engine) appendValidate(dst, answerJSON []byte, inPlace bool) ([]byte, error) {
	e.reqMem.release(0) // a large request's memory is not kept for answers
	a, err := decodeAnswer(answerJSON, &e.policy.Limits, inPlace)
	if err != nil {
		return dst, err
	}
	return e.appendCheck(dst, a)
}

// Check is Validate without the JSON.
func (e *Engine) Check(a *Answer) *Validation {
	if a == nil {
		return &Validation{}
	}
	return e.check(a)
}

// Describe returns {"version","schema_version","policy":{"name","version","sha256"}}.
func (e *Engine) Describe() []byte {
	b := append([]byte(nil), `{"version":`...)
	b = jsonx.AppendString(b, Version)
	b = append(b, `,"schema_version":`...)
	b = jsonx.AppendString(b, SchemaVersion)
	b = append(b, `,"policy":{"name":`...)
	b = jsonx.AppendString(b, e.ref.Name)
	b = append(b, `,"version":`...)
	b = jsonx.AppendString(b, e.ref.Version)
	b = append(b, `,"sha256":`...)
	b = jsonx.AppendString(b, e.ref.SHA256)
	return append(b, "}}"...)
}
