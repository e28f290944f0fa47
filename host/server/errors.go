package server

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/host"
)

// Error codes the server adds to the core's (bad_json, bad_field, limit,
// bad_policy, bad_answer, internal). docs/server.md lists them with statuses.
const (
	codeTimeout     = "timeout"      // 503: the gate deadline passed, or the pool stayed busy
	codeReadTimeout = "read_timeout" // 408: the client did not send its body in time
	codeUpstream    = "upstream"     // 502: the upstream LLM could not be reached or broke off its answer
	codeNotFound    = "not_found"    // 404: unknown path, or an unknown decision id
	codeMethod      = "method_not_allowed"
	codeNoUpstream  = "no_upstream" // 404: gateway mode is off (no --upstream)
	codeUnavailable = "unavailable" // 503: the server is shutting down
	codeOverloaded  = "overloaded"  // 503: max_inflight_body_bytes of bodies are held already
	// 504: the upstream sent no headers within upstream_timeout, went silent
	// for upstream_idle_timeout, or did not finish within write_timeout.
	codeUpstreamTimeout = "upstream_timeout"
)

// apiError is an error answer: the stable JSON shape plus its status.
type apiError struct {
	Status  int
	Code    string
	Field   string
	Message string
	// JSON, when set, is the guest's own error JSON, passed through unchanged
	// so /v1/gate answers with the same bytes as every other host.
	JSON []byte
	// ID, when set, is sent as X-Ctxgate-Decision-Id: the id a fault was
	// logged under, so a client's report can be matched to the log line.
	ID string
}

func (e *apiError) Error() string {
	if e.Field == "" {
		return e.Code + ": " + e.Message
	}
	return e.Code + ": " + e.Field + ": " + e.Message
}

// body is the guest's bytes when there are any, else the same shape written
// by the core's own writer, so every error a client sees has one encoder.
func (e *apiError) body() []byte {
	if e.JSON != nil {
		return e.JSON
	}
	return gate.AppendError(nil, &gate.Error{Code: e.Code, Field: e.Field, Message: e.Message})
}

func newAPIError(status int, code, field, msg string) *apiError {
	return &apiError{Status: status, Code: code, Field: field, Message: msg}
}

// statusOf maps an error code to its HTTP status (docs/architecture.md).
func statusOf(code string) int {
	switch code {
	case gate.CodeBadJSON:
		return http.StatusBadRequest
	case gate.CodeLimit:
		return http.StatusRequestEntityTooLarge
	case gate.CodeBadField, gate.CodeBadAnswer, gate.CodeBadPolicy:
		// bad_policy for a request is 422; "no policy loaded" is answered
		// with 503 by the server itself before any call.
		return http.StatusUnprocessableEntity
	case codeTimeout, codeUnavailable, codeOverloaded:
		return http.StatusServiceUnavailable
	case codeReadTimeout:
		return http.StatusRequestTimeout
	case codeUpstream:
		return http.StatusBadGateway
	case codeUpstreamTimeout:
		return http.StatusGatewayTimeout
	case codeNotFound, codeNoUpstream:
		return http.StatusNotFound
	case codeMethod:
		return http.StatusMethodNotAllowed
	}
	return http.StatusInternalServerError
}

// fromCallError turns what a host call returned into an answer. A
// *host.GateError keeps the guest's bytes; a timeout is 503 (the caller may
// retry); a trap or anything else is a 500 that names no internals.
func fromCallError(err error) *apiError {
	var ge *host.GateError
	switch {
	case errors.As(err, &ge):
		e := &apiError{Status: statusOf(ge.Code), Code: ge.Code, Field: ge.Field, Message: ge.Message}
		if ge.JSON != nil {
			e.JSON = ge.JSON
		}
		return e
	case errors.Is(err, host.ErrTimeout):
		return newAPIError(503, codeTimeout, "", "the gate did not decide within its deadline")
	case errors.Is(err, host.ErrClosed):
		return newAPIError(503, codeUnavailable, "", "the gate is closing; retry")
	case errors.Is(err, host.ErrTrap):
		return newAPIError(500, gate.CodeInternal, "", "the gate module trapped; the instance was replaced")
	}
	return newAPIError(500, gate.CodeInternal, "", err.Error())
}

// newDeadline is the error of a gate call whose deadline passed before it
// started: no instance is touched, so none is poisoned.
func newDeadline(ctx context.Context) error {
	return errors.Join(host.ErrTimeout, ctx.Err())
}

// fromGateError converts a core *gate.Error (the gateway's own body parsing
// reports them) to an answer.
func fromGateError(err error) *apiError {
	var ge *gate.Error
	if errors.As(err, &ge) && ge != nil {
		return newAPIError(statusOf(ge.Code), ge.Code, ge.Field, ge.Message)
	}
	return fromCallError(err)
}

func writeError(w http.ResponseWriter, e *apiError) {
	writeErrorBody(w, e, e.body())
}

// writeErrorBody answers e with the error JSON b (the gate's shape, or
// OpenAI's in gateway mode).
func writeErrorBody(w http.ResponseWriter, e *apiError, b []byte) {
	h := w.Header()
	if e.ID != "" {
		h.Set(HeaderDecisionID, e.ID)
	}
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	if e.Status == http.StatusServiceUnavailable {
		h.Set("Retry-After", "1")
	}
	w.WriteHeader(e.Status)
	w.Write(b)
}

func writeJSON(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}
