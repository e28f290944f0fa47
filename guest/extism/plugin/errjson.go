package plugin

import (
	"errors"
	"unicode/utf8"

	"github.com/ctxgate/ctxgate/gate"
)

// ErrorJSON renders err as the error JSON every host shares
// (docs/architecture.md): {"error":{"code":...,"message":...,"field":...}}.
//
// Stopgap: the codec owner is adding gate.AppendError; once it lands this
// becomes `return gate.AppendError(nil, err)` so that the bytes are written by
// one encoder everywhere. Until then it follows the same rules: fixed field
// order, "field" only when there is one, errors that are not *gate.Error
// reported as bad_json (the only way the core fails without naming a field).
func ErrorJSON(err error) []byte {
	code, field, msg := gate.CodeBadJSON, "", ""
	var ge *gate.Error
	if errors.As(err, &ge) && ge != nil {
		code, field, msg = ge.Code, ge.Field, ge.Message
	} else if err != nil {
		msg = err.Error()
	}
	b := make([]byte, 0, 48+len(code)+len(field)+len(msg))
	b = append(b, `{"error":{"code":`...)
	b = appendString(b, code)
	b = append(b, `,"message":`...)
	b = appendString(b, msg)
	if field != "" {
		b = append(b, `,"field":`...)
		b = appendString(b, field)
	}
	return append(b, "}}"...)
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string. strconv.Quote is Go syntax, not
// JSON (\x00, \a, \U0001f600 are not JSON escapes), so this is done by hand:
// quote, backslash and control characters are escaped, invalid UTF-8 becomes
// U+FFFD so the output is always valid JSON.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
