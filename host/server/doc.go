// Package server is `ctxgate serve`: the gate as an HTTP API (POST /v1/gate,
// /v1/validate, /v1/feedback, GET /v1/policy, /healthz, /metrics) and, with
// an upstream, an OpenAI-compatible gateway (POST /v1/chat/completions) that
// gates the retrieved documents of each chat request the way the Envoy filter
// does. Every decision is made by the Wasm module through the host package's
// instance pool; the server only moves bytes, counts, and logs knowledge gaps.
//
// The hot path takes no global lock: the active policy is an atomic pointer
// with a reference count (a reload swaps it and closes the old gate once its
// calls drain), metric children are resolved up front, the feedback store is
// sharded, and gap events go to one writer goroutine through a channel.
package server
