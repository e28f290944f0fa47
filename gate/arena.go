package gate

import (
	"unsafe"

	"github.com/ctxgate/ctxgate/gate/internal/encode"
)

// arena is where decide writes a decision, and the one place that knows who
// owns its memory: the Decision and every part of it that is not the
// request's or the policy's (the chunk outcomes, the signals, the messages
// and their bytes, the gap event, rag_confidence, the refusal and the
// prompt with the chunks its sources stand for) belong to the engine and
// are reused from one decision to the next. Under TinyGo each allocation is
// a walk of the heap and garbage is collected in pauses, so deciding
// allocates nothing in steady state (TestEvaluateAllocs).
//
// Everything in it is valid until the engine's next decision. Evaluate
// encodes it before returning (appendJSON); Decide hands the caller a copy
// of its own (own), so no code that computes a decision knows which of the
// two will happen.
type arena struct {
	d                      Decision
	chunks                 []ChunkOutcome
	signals                []Signal
	missing, factors, recs []string
	warnings               []Warning
	gap                    GapEvent
	rag                    RAGConfidence
	refusal                Refusal
	prompt                 Prompt
	sources                heldSources
	// lowConfidence flags the decision for review (a signal's own
	// threshold, as evidence's low_confidence).
	lowConfidence bool

	// text holds the bytes of the decision's messages (recommendations,
	// factors, missing aspects): each is a string over its part of text,
	// written in place instead of concatenated (a concatenation is an
	// allocation per '+' under TinyGo). A grown text leaves the strings
	// over the old array valid, and the next decision starts it over.
	text []byte

	// size is the decision's JSON size when decide measured it (the
	// output limit's exact walk), else 0: the encoder's first allocation.
	size int
}

// reset starts a decision for the policy ref and returns it.
func (a *arena) reset(ref PolicyRef) *Decision {
	a.d = Decision{Policy: ref}
	a.signals = a.signals[:0]
	a.missing, a.factors, a.recs = a.missing[:0], a.factors[:0], a.recs[:0]
	a.warnings = a.warnings[:0]
	a.text = a.text[:0]
	a.lowConfidence = false
	a.size = 0
	return &a.d
}

// msg returns the end of the decision's message bytes, for appending one
// message; done makes what was appended a string.
func (a *arena) msg() []byte { return a.text }

// done returns the message appended to msg()'s bytes as b, a string over
// the arena's bytes.
func (a *arena) done(b []byte) string {
	start := len(a.text)
	if start >= len(b) {
		return ""
	}
	a.text = b
	return unsafe.String(&b[start], len(b)-start)
}

// missingAspect, factor and recommend add one message to the decision's
// missing_aspects, confidence_factors and recommendations.
func (a *arena) missingAspect(s string) { a.missing = append(a.missing, s) }
func (a *arena) factor(s string)        { a.factors = append(a.factors, s) }
func (a *arena) recommend(s string)     { a.recs = append(a.recs, s) }

// warn adds one warning to the decision's warnings.
func (a *arena) warn(code, msg string) {
	a.warnings = append(a.warnings, Warning{Code: code, Message: msg})
	a.d.Warnings = a.warnings
}

// addSignal appends one signal, clamped to [0,1] after snapping.
func (a *arena) addSignal(name string, v float64) {
	sig := Signal{Name: name, Value: clamp01(snap(v))}
	if n := len(a.signals); n < cap(a.signals) {
		// Under TinyGo append is a runtime call even with room to spare.
		a.signals = a.signals[:n+1]
		a.signals[n] = sig
		return
	}
	a.signals = append(a.signals, sig)
}

// signal returns the value of the signal named name, if it was reported.
func (a *arena) signal(name string) (float64, bool) {
	for _, s := range a.signals {
		if s.Name == name {
			return s.Value, true
		}
	}
	return 0, false
}

// outcomes returns n zero chunk outcomes. They are filled where they lie:
// under TinyGo returning and appending one copied it twice (a memcpy call
// each).
func (a *arena) outcomes(n int) []ChunkOutcome {
	if cap(a.chunks) < n {
		a.chunks = make([]ChunkOutcome, n)
	}
	out := a.chunks[:n]
	for i := range out {
		out[i] = ChunkOutcome{}
	}
	return out
}

// ragObject is where this decision's rag_confidence object is written.
func (a *arena) ragObject() *RAGConfidence {
	a.d.RAGConfidence = &a.rag
	return &a.rag
}

// heldPrompt returns the arena's prompt, set to p.
func (a *arena) heldPrompt(p Prompt) *Prompt {
	a.prompt = p
	return &a.prompt
}

// refusalOf returns the arena's refusal, set to r.
func (a *arena) refusalOf(r Refusal) *Refusal {
	a.refusal = r
	return &a.refusal
}

// gapEvent returns the arena's gap event, started for kind; the caller
// appends its top chunks.
func (a *arena) gapEvent(kind string, req *Request, d *Decision) *GapEvent {
	g := &a.gap
	*g = GapEvent{Kind: kind, Query: req.Query, Confidence: d.Confidence, Signals: d.Signals,
		QueryEmbedding: req.QueryEmbedding, TopChunks: g.TopChunks[:0]}
	return g
}

// appendJSON appends the decision's JSON to dst, writing the prompt's
// sources block from the chunks it holds (encode_sources.go), then drops
// what would keep the request alive.
func (a *arena) appendJSON(dst []byte) []byte {
	dst = encode.AppendDecisionSized(dst, &a.d, &a.sources, a.size)
	a.release()
	return dst
}

// release drops the arena's pointers into the request, so that an idle
// engine does not keep the last request's memory alive.
func (a *arena) release() {
	a.sources.release()
	a.gap.QueryEmbedding = nil
}

// own returns a copy of the decision that is the caller's: nothing in it
// points into the arena (the policy's strings and the request's stay
// shared, as they outlive the call anyway). The prompt's sources block is
// built as a string here, the one place a decision needs it as one.
func (a *arena) own() *Decision {
	d := a.d
	d.Signals = append([]Signal(nil), a.d.Signals...)
	d.Chunks = append(make([]ChunkOutcome, 0, len(a.d.Chunks)), a.d.Chunks...)
	// One block for the messages' bytes, the strings over it.
	text := string(a.text)
	d.MissingAspects = ownedMessages(a.d.MissingAspects, a.text, text)
	d.ConfidenceFactors = ownedMessages(a.d.ConfidenceFactors, a.text, text)
	d.Recommendations = ownedMessages(a.d.Recommendations, a.text, text)
	if len(a.d.Warnings) > 0 {
		d.Warnings = make([]Warning, len(a.d.Warnings))
		for i, w := range a.d.Warnings {
			d.Warnings[i] = Warning{Code: w.Code, Message: ownedMessage(w.Message, a.text, text)}
		}
	}
	if r := a.d.RAGConfidence; r != nil {
		c := *r
		d.RAGConfidence = &c
	}
	if r := a.d.Refusal; r != nil {
		c := *r
		d.Refusal = &c
	}
	if p := a.d.Prompt; p != nil {
		c := *p
		if a.sources.stands(p) {
			c.Sources = a.sources.promptText()
		}
		d.Prompt = &c
	}
	if g := a.d.GapEvent; g != nil {
		c := *g
		c.Signals = d.Signals
		c.QueryEmbedding = nil
		if len(g.QueryEmbedding) > 0 {
			c.QueryEmbedding = append([]float64(nil), g.QueryEmbedding...)
		}
		c.TopChunks = append([]GapChunk(nil), g.TopChunks...)
		d.GapEvent = &c
	}
	a.release()
	return &d
}

// inPlace returns the arena's decision with its prompt's sources block
// written out (heldSources.promptBytes), a string over the arena's buffer
// that the next decision overwrites, then drops what would keep the
// request alive, as own does.
func (a *arena) inPlace() *Decision {
	if p := a.d.Prompt; p != nil && a.sources.stands(p) {
		b := a.sources.promptBytes()
		p.Sources = unsafe.String(unsafe.SliceData(b), len(b))
	}
	a.release()
	return &a.d
}

// ownedMessages copies list, whose strings may view the arena's bytes buf,
// into a list of the caller's: a string over buf becomes the same span of
// text (buf's copy), any other string stays as it is. nil for an empty
// list.
func ownedMessages(list []string, buf []byte, text string) []string {
	if len(list) == 0 {
		return nil
	}
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = ownedMessage(s, buf, text)
	}
	return out
}

// ownedMessage is ownedMessages for one string.
func ownedMessage(s string, buf []byte, text string) string {
	if len(s) == 0 || len(buf) == 0 {
		return s
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	if p >= base && p+uintptr(len(s)) <= base+uintptr(len(buf)) {
		at := int(p - base)
		return text[at : at+len(s)]
	}
	return s
}
