package gate

import (
	"unsafe"

	"github.com/ctxgate/ctxgate/gate/internal/decode"
	"github.com/ctxgate/ctxgate/gate/internal/encode"
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

	// The memory requests are decoded into, reused between calls
	// (gate/internal/decode).
	mem decode.Memory

	// Scratch reused between decisions (never shared with a Decision).
	work       []chunkWork
	qtok       tokenSink // the query's tokens and folded text
	q          queryInfo
	order, tmp []int
	keys       []float64

	// The signal groups (signals.go): each group's state, made at first
	// use; the states of the groups the policy has on, in order; those
	// that write chunk outcomes; and order_by resolved.
	states    []groupState
	running   []groupState
	writers   []outcomeWriter
	orderings []ordering

	// The decision being made, and all the memory it owns (arena.go).
	a arena

	// The answer check's tables and lists (answer_scan.go).
	ans answerMemory

	// Score conventions (metric.go): the host's defaults, the decision's
	// resolved ones, and the signal by which the policy's confidence reads
	// a cosine level ("" for none; retrieval: only through a chunk's
	// vector fallback).
	defaults             Defaults
	scale                scoreScale
	levelSignal          string
	levelSignalRetrieval bool
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
	return newEngine(p, ref), nil
}

func newEngine(p *Policy, ref PolicyRef) *Engine {
	e := &Engine{policy: p, ref: ref, states: make([]groupState, len(signalGroups))}
	e.resolveSignals()
	e.levelSignal, e.levelSignalRetrieval = confidenceLevelSignal(p)
	return e
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
	return newEngine(p, ref), nil
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
	if err := e.decide(req); err != nil {
		return dst, err
	}
	if e.mem.Holds(req) && !overlaps(dst, data) {
		e.a.sources.src, e.a.sources.mem = data, &e.mem
	}
	return e.a.appendJSON(dst), nil
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
//
// The decision is the caller's: it is decided like Evaluate's, in the
// engine's memory, and copied out (arena.own).
func (e *Engine) Decide(req *Request) (*Decision, error) {
	if err := e.decideWithin(req); err != nil {
		return nil, err
	}
	return e.a.own(), nil
}

// DecideInPlace is Decide for a caller that is done with the decision
// before its next call on e (the Envoy filter rewrites the request body
// with it at once): the Decision is the engine's own, valid until that
// call, and its prompt's sources block is written into the engine's reused
// buffer instead of a new string. For a request of a megabyte of chunks
// that string is most of a megabyte, and under TinyGo every such piece of
// garbage risks staying for good: the collector scans the module's
// read-only data as roots, and a word of it that reads as an address
// inside the piece keeps the whole piece alive.
func (e *Engine) DecideInPlace(req *Request) (*Decision, error) {
	if err := e.decideWithin(req); err != nil {
		return nil, err
	}
	return e.a.inPlace(), nil
}

// decideWithin decides a Go caller's request into the arena after the
// policy's input limits, which DecodeRequest enforces for a JSON one.
func (e *Engine) decideWithin(req *Request) error {
	if req != nil {
		if err := decode.CheckLimits(req, &e.policy.Limits); err != nil {
			return err
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
	e.mem.Release() // a large request's memory is not kept for answers
	a, err := decode.ParseAnswer(answerJSON, &e.policy.Limits, inPlace)
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

// DecodeRequest parses and validates a request document (docs/decision.md)
// into a Request of the caller's; lim may be nil, and a zero field means
// the default (DefaultLimits). Nothing is silently truncated or guessed:
// input the gate cannot decide on correctly is an error naming the field
// (gate/internal/decode has the rules). The returned error is always a
// *Error.
func DecodeRequest(data []byte, lim *Limits) (*Request, error) {
	r, err := decode.ParseRequest(data, lim, false)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// DecodeRequestInPlace is DecodeRequest for a caller that owns data and is
// done with it, such as a Wasm guest holding its freshly read input: it
// skips copying the document (jsonx.ParseInPlace). data may be modified
// (escaped strings are unescaped in place); the Request does not alias it.
func DecodeRequestInPlace(data []byte, lim *Limits) (*Request, error) {
	r, err := decode.ParseRequest(data, lim, true)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// DecodeRequestInPlace is the package's DecodeRequestInPlace under the
// engine's policy limits, decoding into memory the engine keeps from one
// call to the next, so a Wasm guest deciding one request after another
// allocates nothing to decode in steady state, which is what keeps
// TinyGo's collector out of the way (jsonx/doc.go). data is consumed as by
// the package function.
//
// The Request belongs to the engine: it, its strings and slices, and any
// Decision made from it (chunk ids, the query) are valid only until the
// next DecodeRequestInPlace, Evaluate or Validate on this engine, which
// reuse (or, after a large request, release) the memory. Encode or copy
// what you keep before that; use DecodeRequest for a Request of your own.
func (e *Engine) DecodeRequestInPlace(data []byte) (*Request, error) {
	r, err := e.mem.Decode(data, &e.policy.Limits, true)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// decodeRequest is DecodeRequest into the engine's reused memory (the
// Request lives until the next call, like DecodeRequestInPlace's); data is
// not modified.
func (e *Engine) decodeRequest(data []byte) (*Request, error) {
	r, err := e.mem.Decode(data, &e.policy.Limits, false)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// DecodeAnswer parses the answer-validation input {"answer": "...", "tags":
// ["S1", ...], "query": "..."} (gate/internal/decode has the rules). The
// returned error is always a *Error.
func DecodeAnswer(data []byte, lim *Limits) (*Answer, error) {
	a, err := decode.ParseAnswer(data, lim, false)
	if err != nil {
		return nil, err
	}
	return a, nil
}

// AppendDecision appends the decision JSON to dst: compact, no trailing
// newline, fields in the order of the Decision type, numbers rounded to 6
// decimal places. Lists are written as [] when empty and optional objects
// as null, so every decision has the same keys and a host can read it
// without presence checks. The bytes depend only on d, never on the build
// or the host.
func AppendDecision(dst []byte, d *Decision) []byte { return encode.AppendDecision(dst, d, nil) }

// AppendGapEvent appends a gap event's JSON object, or null for nil: the
// one encoder every writer of gap events uses (the decision's and the
// validation's gap_event, the server's thumbs-down and soft-refusal
// events), so an event has the same bytes whoever logs it.
func AppendGapEvent(dst []byte, g *GapEvent) []byte { return encode.AppendGapEvent(dst, g) }

// AppendValidation appends the answer-validation JSON:
// {"soft_refusal":..,"cited":[..],"unknown":[..],"uncited_sentences":[..],"gap_event":..}.
func AppendValidation(dst []byte, v *Validation) []byte { return encode.AppendValidation(dst, v) }

// AppendError appends the error JSON every host returns:
// {"error":{"code":"bad_field","message":"...","field":"chunks[2].scores.vector"}}.
// field is always present ("" when the error is not about one field). A
// *Error wrapped by a host (fmt.Errorf("...: %w", err)) keeps its code; any
// other error is "internal".
func AppendError(dst []byte, err error) []byte { return encode.AppendError(dst, err) }
