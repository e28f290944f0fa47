// Package wit holds ctxgate.wit, the typed description of the gate's
// interface (see README.md). Its test keeps the WIT in step with the Go wire
// types in gate/types.go and with the bytes the encoder writes.
package wit

import _ "embed"

// WIT is the text of ctxgate.wit, for hosts that serve or print it.
//
//go:embed ctxgate.wit
var WIT string
