package gate

import "testing"

// appendEscapedRef is the escaper as it was before it copied runs whole
// (commit 12fd37d): the reference the fast one must match byte for byte.
func appendEscapedRef(b []byte, s string, oneLine bool) []byte {
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '<' && formsFenceTag(s[i+1:]):
			b = append(b, "&lt;"...)
		case ch == '[' && formsSourceTag(s[i+1:]):
			b = append(b, '(')
			// Rewrite the matching ']' too, across "S1, S2" lists.
			j := i + 1
			for j < len(s) && (s[j] == ' ' || s[j] == ',' || s[j] == 'S' || s[j] == 's' || s[j] >= '0' && s[j] <= '9') {
				j++
			}
			b = append(b, s[i+1:j]...)
			if j < len(s) && s[j] == ']' {
				b = append(b, ')')
				j++
			}
			i = j - 1
		case oneLine && (ch == '\n' || ch == '\r'):
			b = append(b, ' ')
		default:
			b = append(b, ch)
		}
	}
	return b
}

var escapeCases = []string{
	"", "plain text", "<sources>", "</ SOURCES >", "< /untrusted>", "<b>bold</b> [1] [S]", "[S1] and [ s2, S3 ]",
	"[S1", "ends with <", "ends with [", "ends with </", "a\nb\r\nc", "<<<[[[", "x[S9]y<untrusted>z",
	"\xff<sources\xfe", "[S1, S2] [s12]", "title\n[S4]\r<sources",
}

func TestAppendEscapedMatchesRef(t *testing.T) {
	for _, s := range escapeCases {
		checkEscapeRef(t, s)
	}
}

func checkEscapeRef(t *testing.T, s string) {
	t.Helper()
	for _, oneLine := range []bool{false, true} {
		got, want := appendEscaped([]byte("p:"), s, oneLine), appendEscapedRef([]byte("p:"), s, oneLine)
		if string(got) != string(want) {
			t.Fatalf("%q oneLine=%v: %q, reference %q", s, oneLine, got, want)
		}
	}
}

func FuzzAppendEscaped(f *testing.F) {
	for _, s := range escapeCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkEscapeRef(t, s) })
}
