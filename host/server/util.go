package server

import (
	"context"
	"errors"
	"strings"

	"github.com/ctxgate/ctxgate/host"
)

func asType[T error](err error, target *T) bool { return errors.As(err, target) }

func cutPrefix(s, prefix string) (string, bool) { return strings.CutPrefix(s, prefix) }

func trimQuotes(s string) string { return strings.Trim(s, `"`) }

// newDeadline is the error of a gate call whose deadline passed before it
// started: no instance is touched, so none is poisoned.
func newDeadline(ctx context.Context) error {
	return errors.Join(host.ErrTimeout, ctx.Err())
}
