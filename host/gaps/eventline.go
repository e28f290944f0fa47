package gaps

import (
	"time"

	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// AppendEventLine builds one gap-log line (docs/architecture.md): the
// decision's gap_event object with time, decision_id and policy added, then a
// newline. Every writer of gap logs (the server, `ctxgate eval --gap-log`)
// uses it, so ReadEvents has one format to read. gapEvent must be a JSON
// object as the core wrote it; it is copied member for member, not
// re-encoded, so the event keeps the core's exact bytes.
func AppendEventLine(dst, gapEvent []byte, at time.Time, decisionID string, p PolicyRef) []byte {
	body := gapEvent[:len(gapEvent)-1] // without the closing brace
	dst = append(dst, body...)
	if len(body) > 1 {
		dst = append(dst, ',')
	}
	dst = append(dst, `"time":`...)
	dst = jsonx.AppendString(dst, at.UTC().Format(time.RFC3339Nano))
	dst = append(dst, `,"decision_id":`...)
	dst = jsonx.AppendString(dst, decisionID)
	dst = append(dst, `,"policy":{"name":`...)
	dst = jsonx.AppendString(dst, p.Name)
	dst = append(dst, `,"version":`...)
	dst = jsonx.AppendString(dst, p.Version)
	dst = append(dst, `,"sha256":`...)
	dst = jsonx.AppendString(dst, p.SHA256)
	return append(dst, "}}\n"...)
}

// EventFromDecision pulls the gap_event and policy out of a decision JSON.
// ok is false when the decision records no gap (gap_event is null); the
// policy is returned either way.
func EventFromDecision(decision []byte) (gapEvent []byte, p PolicyRef, ok bool, err error) {
	v, err := jsonx.Parse(decision, 64)
	if err != nil {
		return nil, p, false, err
	}
	if pol := v.Get("policy"); pol != nil {
		p = PolicyRef{pol.Get("name").Str(), pol.Get("version").Str(), pol.Get("sha256").Str()}
	}
	ev := v.Get("gap_event")
	if ev == nil || ev.Kind() != jsonx.Object {
		return nil, p, false, nil
	}
	return jsonx.AppendValue(nil, ev), p, true, nil
}
