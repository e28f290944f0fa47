package server

import (
	"net/http"

	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// In gateway mode the client is an OpenAI SDK, so the gateway's own errors
// take OpenAI's shape, {"error":{"message","type","param","code"}}: the SDKs
// read message, type, param and code from it into their error objects.
// code is the gate's error code (bad_field, upstream_timeout, ...), param
// the field it names (null when none), and type OpenAI's word for the
// class: invalid_request_error for 4xx, server_error for 5xx. The gate API
// (/v1/gate, /v1/validate, ...) keeps the gate's own error JSON.

// openAIErrorType is the error's "type" for an HTTP status.
func openAIErrorType(status int) string {
	if status >= 500 {
		return "server_error"
	}
	return "invalid_request_error"
}

// appendOpenAIError writes the error object {"error":{...}}.
func appendOpenAIError(dst []byte, e *apiError) []byte {
	dst = append(dst, `{"error":{"message":`...)
	dst = jsonx.AppendString(dst, e.Message)
	dst = append(dst, `,"type":`...)
	dst = jsonx.AppendString(dst, openAIErrorType(e.Status))
	dst = append(dst, `,"param":`...)
	if e.Field == "" {
		dst = append(dst, "null"...)
	} else {
		dst = jsonx.AppendString(dst, e.Field)
	}
	dst = append(dst, `,"code":`...)
	dst = jsonx.AppendString(dst, e.Code)
	return append(dst, "}}"...)
}

// failGateway writes an error answer in OpenAI's shape and counts it.
func (s *Server) failGateway(w http.ResponseWriter, e *apiError) {
	s.metrics.errors.WithLabelValues(e.Code).Inc()
	noteError(w, e.Code)
	writeErrorBody(w, e, appendOpenAIError(nil, e))
}
