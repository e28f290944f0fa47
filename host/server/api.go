package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/ctxgate/ctxgate/gate/jsonx"
	"github.com/ctxgate/ctxgate/gate/wire"
	"github.com/ctxgate/ctxgate/host"
	"github.com/ctxgate/ctxgate/host/decisionlog"
	"github.com/ctxgate/ctxgate/policies"
)

// handleGate: POST /v1/gate, a gate request in, the decision out. The body is
// the core's decision JSON byte for byte; the decision id travels in the
// X-Ctxgate-Decision-Id header so the decision stays identical to every
// other host's.
func (s *Server) handleGate(w http.ResponseWriter, r *http.Request) {
	body, held, ok := s.gatedBody(w, r, "request")
	if !ok {
		return
	}
	defer held.release()
	out, d, e := s.decide(r, body, false)
	if e != nil {
		s.fail(w, e)
		return
	}
	id := s.newID()
	query, emb := requestQuery(body)
	s.remember(id, query, emb, d)
	noteDecision(w, d, id)
	setDecisionHeaders(w.Header(), d, id)
	writeJSON(w, http.StatusOK, out)
}

// gatedBody reads the body of a request the gate must answer (what, the
// gate's word for it: request, answer), under the policy's
// max_request_bytes as well as max_body_bytes: the gate refuses a longer
// input anyway, so no more of it is read (a longer declared length, none
// of it) and the refusal is the gate's own. With no policy loaded it
// answers 503 before reading anything; ok false means the error answer is
// written. The caller releases the body.
func (s *Server) gatedBody(w http.ResponseWriter, r *http.Request, what string) ([]byte, *heldBody, bool) {
	a := s.cur.Load()
	if a == nil {
		s.fail(w, noPolicy)
		return nil, nil, false
	}
	limit, over := s.opts.MaxBodyBytes, tooLarge
	if a.maxRequest > 0 && int64(a.maxRequest) < limit {
		limit = int64(a.maxRequest)
		over = func(n, limit int64) *apiError {
			size := "more than " + strconv.FormatInt(limit, 10)
			if n >= 0 {
				size = strconv.FormatInt(n, 10)
			}
			e := wire.LimitError("", what+" is "+size+" bytes", int(limit), "max_request_bytes")
			return newAPIError(statusOf(e.Code), e.Code, e.Field, e.Message)
		}
	}
	body, held, e := s.readHeld(w, r, limit, over)
	if e != nil {
		s.fail(w, e)
		return nil, nil, false
	}
	return body, held, true
}

// decide runs the gate on a gate request under the gate deadline and counts
// the decision. The policy is acquired only for the call itself.
func (s *Server) decide(r *http.Request, request []byte, withPrompt bool) ([]byte, *decisionView, *apiError) {
	a := s.acquire()
	if a == nil {
		return nil, nil, noPolicy
	}
	defer a.release()
	ctx, cancel := s.gateCtx(r)
	defer cancel()
	if ctx.Err() != nil {
		return nil, nil, fromCallError(newDeadline(ctx))
	}
	start := time.Now()
	out, err := s.evaluator(a, len(request)).Evaluate(ctx, request)
	elapsed := time.Since(start)
	if err != nil {
		return nil, nil, s.callFailed(r, "evaluate", a, len(request), err)
	}
	d, err := readDecision(out, withPrompt)
	if err != nil {
		return nil, nil, newAPIError(500, "internal", "", "unreadable decision: "+err.Error())
	}
	if s.opts.RequireEmbeddings && !d.hasSignal("relevance") {
		return nil, nil, newAPIError(422, "bad_field", "query_embedding",
			"require_embeddings is set: send query_embedding and an embedding for each chunk")
	}
	s.metrics.observe(d, elapsed.Seconds())
	d.request, d.path = request, r.URL.Path
	return out, d, nil
}

// remember keeps the decision for feedback, writes its decision-log line
// and logs its gap event, if any (a hard refusal or a low-confidence
// decision).
func (s *Server) remember(id, query string, emb []byte, d *decisionView) {
	s.records.put(id, newRecord(query, emb, d))
	s.decLog.log(id, d)
	d.request = nil // the gateway keeps d while the upstream answers
	if d.hasGap() {
		s.gaps.add(gapKind(d.GapEvent), d.GapEvent, id, d.Policy)
	}
}

func gapKind(gapEvent []byte) string {
	var g struct {
		Kind string `json:"kind"`
	}
	json.Unmarshal(gapEvent, &g)
	return g.Kind
}

// handleValidate: POST /v1/validate, {"answer","tags","query"} in, the
// validation JSON out. A soft refusal is a gap event of the decision named
// by X-Ctxgate-Decision-Id (logSoftRefusal); an id this server did not
// issue is refused (404) before anything else happens, as feedback refuses
// it.
func (s *Server) handleValidate(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get(HeaderDecisionID)
	if id != "" && !s.ids.valid(id, idDecision) {
		s.fail(w, unknownDecision(HeaderDecisionID))
		return
	}
	body, held, ok := s.gatedBody(w, r, "answer")
	if !ok {
		return
	}
	defer held.release()
	out, e := s.validate(r, body)
	if e != nil {
		s.fail(w, e)
		return
	}
	v := parseValidation(out)
	s.answerChecked(v)
	s.logSoftRefusal(id, v)
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) validate(r *http.Request, answer []byte) ([]byte, *apiError) {
	a := s.acquire()
	if a == nil {
		return nil, noPolicy
	}
	defer a.release()
	ctx, cancel := s.gateCtx(r)
	defer cancel()
	if ctx.Err() != nil {
		return nil, fromCallError(newDeadline(ctx))
	}
	out, err := s.evaluator(a, len(answer)).Validate(ctx, answer)
	if err != nil {
		return nil, s.callFailed(r, "validate", a, len(answer), err)
	}
	return out, nil
}

// validationView is the part of a validation the server acts on.
type validationView struct {
	SoftRefusal bool            `json:"soft_refusal"`
	Unknown     []string        `json:"unknown"`
	Uncited     []string        `json:"uncited_sentences"`
	GapEvent    json.RawMessage `json:"gap_event"`
}

func parseValidation(b []byte) *validationView {
	v := new(validationView)
	json.Unmarshal(b, v)
	return v
}

func (s *Server) answerChecked(v *validationView) {
	m := s.metrics.answerChecks
	switch {
	case v.SoftRefusal:
		m.WithLabelValues("soft_refusal").Inc()
		s.metrics.softRefusal()
	case len(v.Unknown) > 0:
		m.WithLabelValues("unknown_citations").Inc()
	case len(v.Uncited) > 0:
		m.WithLabelValues("uncited_sentences").Inc()
	default:
		m.WithLabelValues("ok").Inc()
	}
}

// logSoftRefusal logs a soft refusal as a refusal_soft gap event of the
// decision id names, built from what the server remembers of it (query,
// signals, top chunks), the first time only. The caller has checked that
// the server issued id. Nothing else is logged: not a validation without an
// id, whose query is the caller's to choose (300 of them would otherwise
// rank any text first on /gaps), nor one for a decision no longer
// remembered (feedback_entries), whose repeats could not be told apart.
func (s *Server) logSoftRefusal(id string, v *validationView) {
	if !v.SoftRefusal || id == "" || s.gaps == nil {
		return
	}
	if rec, first := s.records.firstGap(id, gapRefusalSoft); first {
		s.gaps.add("refusal_soft", rec.appendGapEvent(nil, "refusal_soft", ""), id, rec.policy)
	}
}

// handlePolicy: GET /v1/policy, the active policy document and identity.
func (s *Server) handlePolicy(w http.ResponseWriter, r *http.Request) {
	a := s.cur.Load()
	if a == nil {
		s.fail(w, noPolicy)
		return
	}
	doc := a.document
	if len(doc) == 0 {
		doc = policies.Default()
	}
	out := []byte(`{"policy":`)
	out = appendRef(out, a.ref)
	out = append(out, `,"source":`...)
	out = jsonx.AppendString(out, a.source)
	out = append(out, `,"loaded_at":`...)
	out = jsonx.AppendString(out, a.loadedAt.Format(time.RFC3339))
	out = append(out, `,"document":`...)
	var c bytes.Buffer
	if json.Compact(&c, doc) == nil {
		out = append(out, c.Bytes()...)
	} else {
		out = append(out, "null"...)
	}
	out = append(out, '}')
	writeJSON(w, http.StatusOK, out)
}

func appendRef(dst []byte, r policyRef) []byte {
	return decisionlog.AppendPolicy(dst, decisionlog.PolicyRef(r))
}

// handleHealth: GET /healthz, 200 when a policy is loaded and the server is
// not shutting down, else 503.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	a := s.cur.Load()
	switch {
	case s.closing.Load():
		writeJSON(w, 503, []byte(`{"status":"shutting_down"}`))
		return
	case a == nil:
		writeJSON(w, 503, []byte(`{"status":"no_policy"}`))
		return
	}
	out := []byte(`{"status":"ok","policy":`)
	out = appendRef(out, a.ref)
	out = append(out, `,"module":`...)
	out = jsonx.AppendString(out, s.moduleName())
	if a.stats != nil {
		out = appendPool(append(out, `,"pool":`...), a.stats())
	}
	if a.largeStats != nil {
		out = appendPool(append(out, `,"large_pool":`...), a.largeStats())
		out = append(out, `,"large_body_bytes":`...)
		out = strconv.AppendInt(out, int64(a.largeFrom), 10)
	}
	out = append(out, '}')
	writeJSON(w, http.StatusOK, out)
}

func appendPool(out []byte, st host.Stats) []byte {
	out = append(out, `{"size":`...)
	out = strconv.AppendInt(out, int64(st.Size), 10)
	out = append(out, `,"live":`...)
	out = strconv.AppendInt(out, int64(st.Live), 10)
	out = append(out, `,"in_use":`...)
	out = strconv.AppendInt(out, int64(st.InUse), 10)
	return append(out, '}')
}

func (s *Server) moduleName() string {
	switch {
	case s.opts.Native:
		return "native"
	case s.opts.Wasm != nil:
		return "custom"
	}
	return s.opts.Module.String()
}
