package server

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/ctxgate/ctxgate/gate/jsonx"
	"github.com/ctxgate/ctxgate/host/decisionlog"
)

// codeUnauthorized: 401, POST /v1/feedback without a valid bearer token.
const codeUnauthorized = "unauthorized"

// MinFeedbackTokenBytes is the shortest feedback token accepted: a token
// is a shared secret, and a short one can be guessed.
const MinFeedbackTokenBytes = 16

// feedbackState is what POST /v1/feedback needs beyond the records: the
// feedback log, the bearer tokens and the verdict metrics.
type feedbackState struct {
	lines    *lineLog              // nil: verdicts are counted, not recorded
	tokens   [][sha256.Size]byte   // SHA-256 of each accepted token; none: no authentication
	verdicts [2]prometheus.Counter // answer_in_sources false, true
	replaced map[string]prometheus.Counter
}

// feedbackVerdict is a decision's latest feedback, kept in its record
// under the shard's lock: each field the latest value sent.
type feedbackVerdict struct {
	rating string // "", "up", "down"
	answer *bool
	at     time.Time // the latest feedback's timestamp
}

func newFeedbackState(f promauto.Factory, tokens []string) (*feedbackState, error) {
	st := &feedbackState{replaced: map[string]prometheus.Counter{}}
	for i, t := range tokens {
		if len(t) < MinFeedbackTokenBytes || strings.ContainsAny(t, " \t\r\n") {
			return nil, errors.New("feedback token " + strconv.Itoa(i+1) + ": want at least " +
				strconv.Itoa(MinFeedbackTokenBytes) + " characters and no spaces")
		}
		st.tokens = append(st.tokens, sha256.Sum256([]byte(t)))
	}
	v := f.NewCounterVec(prometheus.CounterOpts{Name: "ctxgate_feedback_verdicts_total",
		Help: "Feedback carrying the calibration verdict, by answer_in_sources (true: the answer was in the sources)."}, []string{"answer_in_sources"})
	st.verdicts = [2]prometheus.Counter{v.WithLabelValues("false"), v.WithLabelValues("true")}
	r := f.NewCounterVec(prometheus.CounterOpts{Name: "ctxgate_feedback_replaced_total",
		Help: "Feedback values that replaced an earlier one for the same decision (one verdict per decision is kept: the latest), by field."}, []string{"field"})
	for _, field := range []string{"rating", "answer_in_sources"} {
		st.replaced[field] = r.WithLabelValues(field)
	}
	return st, nil
}

// authorize checks the bearer token when tokens are configured; what names
// the endpoint in the error. basic also takes the token as the password of
// HTTP Basic authentication (any user name), which a browser asks for
// itself. Every token is compared, each in constant time over its SHA-256
// (so neither the length nor the position of a match shows in the timing).
func (st *feedbackState) authorize(r *http.Request, what string, basic bool) *apiError {
	if len(st.tokens) == 0 {
		return nil
	}
	token, ok := presentedToken(r, basic)
	if !ok {
		msg := what + " needs Authorization: Bearer <token>"
		if basic {
			msg += " (or, in a browser, the token as the password)"
		}
		return newAPIError(http.StatusUnauthorized, codeUnauthorized, "", msg)
	}
	sum := sha256.Sum256([]byte(token))
	match := 0
	for i := range st.tokens {
		match |= subtle.ConstantTimeCompare(sum[:], st.tokens[i][:])
	}
	if match != 1 {
		return newAPIError(http.StatusUnauthorized, codeUnauthorized, "", "the bearer token is not accepted")
	}
	return nil
}

// presentedToken is the request's bearer token, or with basic its Basic
// password; false when there is none.
func presentedToken(r *http.Request, basic bool) (string, bool) {
	if _, password, ok := r.BasicAuth(); basic && ok {
		return password, strings.TrimSpace(password) != ""
	}
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	token = strings.TrimSpace(token)
	return token, ok && strings.EqualFold(scheme, "Bearer") && token != ""
}

// feedbackBody is POST /v1/feedback's input.
type feedbackBody struct {
	DecisionID      *string `json:"decision_id"`
	Rating          *string `json:"rating"`
	AnswerInSources *bool   `json:"answer_in_sources"`
	Comment         string  `json:"comment"`
}

func parseFeedback(body []byte) (*feedbackBody, *apiError) {
	var fb feedbackBody
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&fb); err != nil {
		return nil, feedbackDecodeError(err)
	}
	if dec.More() {
		return nil, newAPIError(400, "bad_json", "", "feedback is not one JSON object: more follows it")
	}
	// encoding/json lets a repeated member's last value win and replaces
	// invalid UTF-8; the gate's parser refuses both, as it does in requests,
	// so no two readers of one feedback body disagree on what it says.
	if _, err := jsonx.ParseWith(body, jsonx.Limits{CheckOnly: true}); err != nil {
		return nil, newAPIError(400, "bad_json", "", "feedback is not strict JSON: "+err.Error())
	}
	switch {
	case fb.DecisionID == nil || *fb.DecisionID == "":
		return nil, newAPIError(422, "bad_field", "decision_id", "required: the X-Ctxgate-Decision-Id of the decision rated")
	case fb.Rating != nil && *fb.Rating != "up" && *fb.Rating != "down":
		return nil, newAPIError(422, "bad_field", "rating", `must be "up" or "down"`)
	case fb.Rating == nil && fb.AnswerInSources == nil:
		return nil, newAPIError(422, "bad_field", "answer_in_sources",
			`required unless rating is sent: true when the answer was in the sources, false when not`)
	case len(fb.Comment) > 4096:
		return nil, newAPIError(413, "limit", "comment", "at most 4096 bytes")
	}
	return &fb, nil
}

func feedbackDecodeError(err error) *apiError {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return newAPIError(422, "bad_field", te.Field, "must be a "+te.Type.String())
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return newAPIError(422, "bad_field", strings.Trim(f, `"`), "unknown field")
	}
	return newAPIError(400, "bad_json", "", "feedback is not a JSON object: "+msg)
}

// handleFeedback: POST /v1/feedback {"decision_id", "rating": "up"|"down",
// "answer_in_sources": true|false, "comment"}, rating or answer_in_sources
// or both. The feedback is checked whole before anything happens: a
// request that is unauthenticated, malformed, or names an id this server
// did not issue changes nothing (no log line, no metric but the error's,
// no gap event). Accepted, each field replaces the decision's earlier value
// (counted), the feedback log gets a line, and the first thumbs-down for a
// remembered decision is a gap event.
func (s *Server) handleFeedback(w http.ResponseWriter, r *http.Request) {
	st := s.fbState
	if e := st.authorize(r, "feedback", false); e != nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="ctxgate"`)
		s.fail(w, e)
		return
	}
	body, e := s.readBody(w, r)
	if e != nil {
		s.fail(w, e)
		return
	}
	fb, e := parseFeedback(body)
	if e != nil {
		s.fail(w, e)
		return
	}
	id := *fb.DecisionID
	if !s.ids.valid(id, idDecision) {
		s.fail(w, unknownDecision("decision_id"))
		return
	}
	line := decisionlog.Feedback{DecisionID: id, AnswerInSources: fb.AnswerInSources}
	if fb.Rating != nil {
		line.Rating = *fb.Rating
	}
	var rec *record
	var replacedRating, replacedAnswer, gap bool
	s.records.withRecord(id, func(r *record) {
		line.Timestamp = time.Now()
		if rec = r; r == nil {
			return // forgotten (FeedbackEntries) or another replica's: recorded, not a gap
		}
		// Under the lock, and strictly after the decision's previous
		// feedback (a coarse or stepped-back clock included): the join
		// orders by timestamp, so its latest value is the one kept here,
		// whatever order the lines reach the file in.
		v := &r.verdict
		if !line.Timestamp.After(v.at) {
			line.Timestamp = v.at.Add(time.Nanosecond)
		}
		v.at = line.Timestamp
		if line.Rating != "" {
			replacedRating = v.rating != ""
			v.rating = line.Rating
			if line.Rating == "down" && r.gaps&gapThumbsDown == 0 {
				r.gaps |= gapThumbsDown
				gap = true
			}
		}
		if line.AnswerInSources != nil {
			replacedAnswer = v.answer != nil
			v.answer = line.AnswerInSources
		}
	})
	if st.lines != nil {
		st.lines.addLine("feedback", decisionlog.AppendFeedback(nil, &line))
	}
	if line.Rating != "" {
		s.metrics.feedback.WithLabelValues(line.Rating).Inc()
	}
	if a := line.AnswerInSources; a != nil {
		st.verdicts[b2i(*a)].Inc()
	}
	if replacedRating {
		st.replaced["rating"].Inc()
	}
	if replacedAnswer {
		st.replaced["answer_in_sources"].Inc()
	}
	gap = gap && s.gaps != nil
	if gap {
		s.gaps.add("thumbs_down", rec.appendGapEvent(nil, "thumbs_down", fb.Comment), id, rec.policy)
	}
	out := []byte(`{"decision_id":`)
	out = jsonx.AppendString(out, id)
	out = append(out, `,"rating":`...)
	if line.Rating != "" {
		out = jsonx.AppendString(out, line.Rating)
	} else {
		out = append(out, "null"...)
	}
	out = append(out, `,"answer_in_sources":`...)
	if a := line.AnswerInSources; a != nil {
		out = strconv.AppendBool(out, *a)
	} else {
		out = append(out, "null"...)
	}
	out = append(out, `,"gap_event":`...)
	out = strconv.AppendBool(out, gap)
	out = append(out, `,"replaced":`...)
	out = strconv.AppendBool(out, replacedRating || replacedAnswer)
	out = append(out, `,"recorded":`...)
	out = strconv.AppendBool(out, st.lines != nil)
	out = append(out, '}')
	writeJSON(w, http.StatusOK, out)
}

// unknownDecision is the 404 for a decision id this server did not issue,
// sent in field (a body member or a header).
func unknownDecision(field string) *apiError {
	return newAPIError(404, codeNotFound, field, "unknown decision id: not one this server issued"+
		" (ids from before a restart are unknown unless decision_id_key_file is set)")
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// withRecord runs fn with id's record under its shard's lock; the record
// is nil when id is not remembered.
func (rs *records) withRecord(id string, fn func(*record)) {
	s := rs.shard(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(s.m[id])
}
