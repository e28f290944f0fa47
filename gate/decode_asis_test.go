package gate

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ctxgate/ctxgate/gate/internal/decode"
	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// The direct decoder marks chunk texts whose JSON, as the request has it,
// is what the sources block writes for them, and Evaluate's encoder copies
// those (gate/internal/decode/direct.go str, encode_sources.go asIsJSON). The tests here
// check the mark against a plain reading of the rule (asIsRef), the rule
// against the encoder itself, and whole decisions against the path that
// never copies (Decide, then AppendDecision).

// asIsRef is str's as-is rule read byte by byte over raw, a string's JSON
// between its quotes that the decoder accepted: no '<', '>', '&', '[', no
// raw U+2028 or U+2029, only the short escapes \" \\ \b \f \n \r \t, and
// only the \u escapes the JSON writer makes itself, spelt as it spells them
// (never one for '<' or '[', whose form the prompt's rules decide).
func asIsRef(raw string) bool {
	for i := 0; i < len(raw); {
		switch c := raw[i]; {
		case c == '<' || c == '>' || c == '&' || c == '[':
			return false
		case c == '\\':
			if i+1 >= len(raw) {
				return false
			}
			switch raw[i+1] {
			case '"', '\\', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(raw) {
					return false
				}
				v, err := strconv.ParseUint(raw[i+2:i+6], 16, 32)
				r := rune(v)
				if err != nil || r == '<' || r == '[' || r >= 0xD800 && r <= 0xDFFF ||
					string(jsonx.AppendStringContent(nil, string(r))) != raw[i:i+6] {
					return false
				}
				i += 6
			default:
				return false
			}
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(raw[i:])
			if r == '\u2028' || r == '\u2029' {
				return false
			}
			i += size
		default:
			i++
		}
	}
	return true
}

// asIsCases are string contents as JSON (between the quotes), valid and not.
var asIsCases = []string{
	``, `plain`, `two\n\nparagraphs`, `tab\tcr\rff\fbs\b`, `quote \" backslash \\ end`, `slash \/ escaped`, `slash / raw`,
	`AT\u0026T`, `a \u003e b`, `a \u003E b`, `a \u003c b`, `a \u005b b`, `\u0041`, `\u000b\u001f\u0000\u007f`, `\u000B`, `\u001F`,
	`\u0008`, `\u0009`, `\u000a`, `\u000c`, `\u000d`, `\u0022`, `\u005c`, `\u002f`, `\u2028\u2029`, `\u2028x\u202A`, `\u00e9`,
	`\ud83d\ude00`, `\uD83D\uDE00`, `caf` + "\u00e9", "\u4e2d\u6587\u5b57", "line\u2028sep", "para\u2029sep", "\u00e9\u2028",
	`a<b`, `a>b`, `a&b`, `a[b`, `[S1]`, `x ^ y | z ~ w`, "del\x7fdel", `]}{`, "\xef\xbf\xbd", `\ufffd`,
	"bad\xff", "ctl\x01", "ctl\x1c", `\x`, `\u12`, `\udc00`, `\ud800x`, "\xe2\x80", `end\`,
}

// asIsRequest puts raw, padded on both sides, as a chunk's text: the pads
// move each byte to every offset in the decoder's 16-byte steps, and into
// its last-bytes loop when the text ends the document.
func asIsRequest(pre int, raw string, post int, tail string) []byte {
	return []byte(`{"query":"q","chunks":[{"id":"a","text":"` + strings.Repeat("a", pre) + raw + strings.Repeat("b", post) + `"` + tail + `}]}`)
}

// checkAsIs decodes data into engine memory and checks the first chunk's
// mark against asIsRef and the encoder.
func checkAsIs(t *testing.T, data []byte) {
	t.Helper()
	var m decode.Memory
	lim := DefaultLimits()
	req, err := m.Decode(data, &lim, false)
	if err != nil || !m.Holds(req) || len(req.Chunks) == 0 || req.Chunks[0].Text == "" {
		if err == nil && len(req.Chunks) > 0 && m.AsIs(req.Chunks[0].Text, data) != nil {
			t.Fatalf("%q: marks left by a decode that gave up or has no text", data)
		}
		return
	}
	start := strings.Index(string(data), `"text":"`) + len(`"text":"`)
	end := start
	for data[end] != '"' {
		if data[end] == '\\' {
			end++
		}
		end++
	}
	raw := string(data[start:end])
	later := heldSources{src: data, mem: &m}
	got := later.asIsJSON(req.Chunks[0].Text)
	if want := asIsRef(raw); (got != nil) != want {
		t.Fatalf("%q: marked %v, rule says %v", raw, got != nil, want)
	}
	if got == nil {
		return
	}
	if string(got) != raw {
		t.Fatalf("%q: the mark points at %q", raw, got)
	}
	if enc := appendEscapedJSON(nil, req.Chunks[0].Text, false); string(enc) != raw {
		t.Fatalf("%q marked as-is, but the encoder writes %q", raw, enc)
	}
	// Another string (same bytes, other address) is never taken for it.
	if later.asIsJSON(strings.Clone(req.Chunks[0].Text)) != nil {
		t.Fatalf("%q: a copy of the text was taken as the decoded one", raw)
	}
}

func TestDecodeDirectAsIs(t *testing.T) {
	tails := []string{``, `,"title":"<&[>"`, `,"doc_id":"d","scores":{"vector":0.5}`}
	marked := 0
	for _, raw := range asIsCases {
		for pre := 0; pre < 18; pre++ {
			for _, post := range []int{0, 1, 7, 15, 16, 17} {
				for _, tail := range tails {
					checkAsIs(t, asIsRequest(pre, raw, post, tail))
				}
			}
		}
		if asIsRef(raw) {
			marked++
		}
	}
	if marked < 15 {
		t.Fatalf("only %d cases are as-is: the test no longer covers the copy", marked)
	}
}

func FuzzDecodeDirectAsIs(f *testing.F) {
	for i, raw := range asIsCases {
		f.Add(i%17, raw, i%5, i%3)
	}
	tails := []string{``, `,"title":"<&[>"`, `,"doc_id":"d","scores":{"vector":0.5}`}
	f.Fuzz(func(t *testing.T, pre int, raw string, post, tail int) {
		if pre < 0 || pre > 64 || post < 0 || post > 64 || tail < 0 || tail >= len(tails) {
			return
		}
		checkAsIs(t, asIsRequest(pre, raw, post, tails[tail]))
	})
}

// asIsEvalRequest is a request with four chunks, texts a and b as JSON
// (between the quotes, as given), the second and fourth untrusted when
// untrusted is set, and scores that keep them in the prompt.
func asIsEvalRequest(a, b string, untrusted bool) []byte {
	u := strconv.FormatBool(untrusted)
	return []byte(`{"query":"what is the reset password link","chunks":[` +
		`{"id":"c1","doc_id":"d1","title":"T1","text":"` + a + `","scores":{"vector":0.91,"bm25":14,"rerank":0.9}},` +
		`{"id":"c2","doc_id":"d2","text":"` + b + `","scores":{"vector":0.88,"bm25":12,"rerank":0.8},"untrusted":` + u + `},` +
		`{"id":"c3","doc_id":"d1","title":"T3","text":"reset ` + b + a + ` link","scores":{"vector":0.8,"bm25":9}},` +
		`{"id":"c4","text":"` + a + ` password","scores":{"vector":0.86,"bm25":10},"untrusted":` + u + `}]}`)
}

// checkEvaluateAsIs compares Evaluate and AppendEvaluateInPlace (which copy
// as-is texts) with Decide and AppendDecision (which never do) on data.
func checkEvaluateAsIs(t *testing.T, e, ref *Engine, data []byte) {
	t.Helper()
	var want []byte
	req, werr := DecodeRequest(data, nil)
	if werr == nil {
		d, err := ref.Decide(req)
		if err != nil {
			werr = err
		} else {
			want = AppendDecision(nil, d)
		}
	}
	got, err := e.Evaluate(data)
	same := func(what string, got []byte, err error) {
		t.Helper()
		if werr != nil {
			if err == nil || string(AppendError(nil, err)) != string(AppendError(nil, werr)) {
				t.Fatalf("%s: error %v, want %v\ninput %q", what, err, werr, data)
			}
			return
		}
		if err != nil || string(got) != string(want) {
			t.Fatalf("%s (err %v):\n%s\nwant\n%s\ninput %q", what, err, got, want, data)
		}
	}
	same("Evaluate", got, err)
	got, err = e.AppendEvaluateInPlace([]byte("x"), append([]byte(nil), data...))
	if err == nil {
		if string(got[:1]) != "x" {
			t.Fatalf("AppendEvaluateInPlace lost dst")
		}
		got = got[1:]
	}
	same("AppendEvaluateInPlace", got, err)
	if e.a.sources.src != nil || e.a.sources.mem != nil {
		t.Fatalf("the encoder kept the request after the call")
	}
}

// hasAsIs reports whether some chunk text of req is marked as-is.
func hasAsIs(m *decode.Memory, req *Request, src []byte) bool {
	for i := range req.Chunks {
		if m.AsIs(req.Chunks[i].Text, src) != nil {
			return true
		}
	}
	return false
}

func TestEvaluateAsIs(t *testing.T) {
	for _, policy := range []string{"support-agent", "default"} {
		e, ref := presetEngine(t, policy), presetEngine(t, policy)
		copied := 0
		for i, a := range asIsCases {
			b := asIsCases[(i*7+3)%len(asIsCases)]
			for _, untrusted := range []bool{false, true} {
				data := asIsEvalRequest(a, b, untrusted)
				checkEvaluateAsIs(t, e, ref, data)
				buf := append([]byte(nil), data...)
				if req, err := e.DecodeRequestInPlace(buf); err == nil && hasAsIs(&e.mem, req, buf) {
					copied++
				}
			}
		}
		if copied < 20 {
			t.Fatalf("%s: only %d requests had as-is texts", policy, copied)
		}
		// The tree decoder's Request (an escaped key makes the direct one
		// give up) never uses marks, including a previous request's.
		checkEvaluateAsIs(t, e, ref, asIsEvalRequest("plain", "text", false))
		checkEvaluateAsIs(t, e, ref, []byte(`{"query":"reset password","chunks":[{"id":"c1","t\u0065xt":"reset password plain","scores":{"vector":0.9,"bm25":12}}]}`))
	}
}

// TestEvaluateAsIsGolden: every golden request decides to the same bytes
// with the copy as without it, through both engine paths.
func TestEvaluateAsIsGolden(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(goldenRoot, "requests", "*", "*.json"))
	if len(files) < 20 {
		t.Fatalf("%d golden requests", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		policy := filepath.Base(filepath.Dir(f))
		checkEvaluateAsIs(t, presetEngine(t, policy), presetEngine(t, policy), data)
	}
}

func FuzzEvaluateAsIs(f *testing.F) {
	for i, a := range asIsCases {
		f.Add(a, asIsCases[(i*7+3)%len(asIsCases)], i%2 == 0)
	}
	e, ref := presetEngine(f, "support-agent"), presetEngine(f, "support-agent")
	f.Fuzz(func(t *testing.T, a, b string, untrusted bool) {
		checkEvaluateAsIs(t, e, ref, asIsEvalRequest(a, b, untrusted))
	})
}

// TestEvaluateOverRequest: a caller done with its request may have the
// decision written over it (dst sharing the request's array, wholly or in
// part); texts are then not copied from the request, whose bytes the
// decision has overwritten, and the decision is Evaluate's.
func TestEvaluateOverRequest(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(goldenRoot, "requests", "*", "*.json"))
	reqs := [][]byte{asIsEvalRequest("To reset your password open the reset password link in the account settings page.", "The password reset link expires after one hour; request a new link.", false)}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, data)
	}
	e, ref := presetEngine(t, "support-agent"), presetEngine(t, "support-agent")
	for i, req := range reqs {
		want, werr := ref.Evaluate(req)
		for _, shift := range []int{0, 1, 100} {
			// The request sits shift bytes into buf; dst starts at buf[0].
			buf := make([]byte, shift+len(req), 4*(shift+len(req))+(64<<10))
			copy(buf[shift:], req)
			got, err := e.AppendEvaluateInPlace(buf[:0], buf[shift:])
			if (err != nil) != (werr != nil) || err == nil && !bytes.Equal(got, want) {
				t.Fatalf("request %d, shift %d: got %s (%v)\nwant %s (%v)", i, shift, got, err, want, werr)
			}
		}
	}
}

func TestOverlaps(t *testing.T) {
	buf := make([]byte, 10, 20)
	for _, c := range []struct {
		dst, data []byte
		want      bool
	}{
		{buf[:0], buf, true},
		{buf[5:5], buf[:5], false},
		{buf[4:4], buf[:5], true},
		{buf[:0:5], buf[5:], false},
		{buf[:0:6], buf[5:], true},
		{nil, buf, false},
		{buf[:0], buf[:0], false},
		{make([]byte, 0, 8), buf, false},
	} {
		if got := overlaps(c.dst, c.data); got != c.want {
			t.Errorf("overlaps(dst cap %d, data len %d) = %v, want %v", cap(c.dst), len(c.data), got, c.want)
		}
	}
}
