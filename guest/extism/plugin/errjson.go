package plugin

import "github.com/ctxgate/ctxgate/gate"

// ErrorJSON renders err as the error JSON every host shares
// (docs/architecture.md), with the core's own encoder so that the bytes are
// the same in the guest, natively and in every host.
func ErrorJSON(err error) []byte { return gate.AppendError(nil, err) }
