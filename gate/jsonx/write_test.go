package jsonx

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestAppendString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `""`},
		{"plain text", `"plain text"`},
		{`q"b\`, `"q\"b\\"`},
		{"\b\f\n\r\t", `"\b\f\n\r\t"`},
		{"\x00\x01\x1f\x7f", `"\u0000\u0001\u001f` + "\x7f" + `"`},
		{"</sources><script>&", `"\u003c/sources\u003e\u003cscript\u003e\u0026"`},
		{"a\u2028b\u2029c", `"a\u2028b\u2029c"`},
		{"é中😀", `"é中😀"`},
		{"bad\xffutf8\xc3", `"bad\ufffdutf8\ufffd"`},
	}
	for _, tc := range tests {
		if got := string(AppendString(nil, tc.in)); got != tc.want {
			t.Errorf("AppendString(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// The escaping is documented as identical to encoding/json's default; check
// it over every byte and the awkward runes so the claim stays true.
func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	var inputs []string
	for c := 0; c < 256; c++ {
		inputs = append(inputs, "x"+string([]byte{byte(c)})+"y")
	}
	inputs = append(inputs, "\u2028\u2029\u00e9\U0001F600\ufffd", "\xed\xa0\x80", "a\xe2\x80")
	for _, s := range inputs {
		want, _ := json.Marshal(s)
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Errorf("AppendString(%q) = %s, encoding/json = %s", s, got, want)
		}
	}
}

func TestAppendStringRoundTrip(t *testing.T) {
	for _, s := range []string{"", "a\"b", "\x00\u2028<>&", "中文 text\n", "\U0010FFFF"} {
		enc := AppendString(nil, s)
		v, err := Parse(enc, 1)
		if err != nil || v.Str() != s {
			t.Errorf("round trip %q: %q, %v", s, v.Str(), err)
		}
	}
}

func TestAppendFloat(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0"},
		{math.Copysign(0, -1), "0"},
		{-0.0000001, "0"}, // rounds to -0, written as 0
		{1, "1"},
		{0.5, "0.5"},
		{0.1 + 0.2, "0.3"},
		{1.0 / 3, "0.333333"},
		{2.0 / 3, "0.666667"},
		{0.0000005, "0.000001"},
		{-0.0000005, "-0.000001"}, // math.Round rounds half away from zero
		{-12.3456789, "-12.345679"},
		{123456789.123456789, "123456789.123457"},
		{1e21, "1000000000000000000000"},
		{math.NaN(), "0"},
		{math.Inf(1), "0"},
		{math.Inf(-1), "0"},
		{math.MaxFloat64, "17976931348623157" + strings.Repeat("0", 292)},
	}
	for _, tc := range tests {
		if got := string(AppendFloat(nil, tc.in)); got != tc.want {
			t.Errorf("AppendFloat(%v) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestAppendCanonical(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"b":1,"a":2,"B":3,"_":4}`, `{"B":3,"_":4,"a":2,"b":1}`},
		{` { "z" : [ { "y":1, "x":2 } ], "é":0, "e":1.50 } `, `{"e":1.50,"z":[{"x":2,"y":1}],"é":0}`},
		{`{"\u0062":"\u00e9","a":"\/"}`, `{"a":"/","b":"é"}`},
		{`{"ab":1,"a":2,"abc":3,"":4}`, `{"":4,"a":2,"ab":1,"abc":3}`},
		{`[3,1,2]`, `[3,1,2]`}, // arrays keep their order
	}
	for _, tc := range tests {
		v, err := Parse([]byte(tc.in), 8)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.in, err)
		}
		if got := string(AppendCanonical(nil, &v)); got != tc.want {
			t.Errorf("AppendCanonical(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
	// Documents differing only in layout, key order and escaping share canonical bytes.
	a, _ := Parse([]byte(`{"name":"x","w":{"b":0.25,"a":0.75}}`), 8)
	b, _ := Parse([]byte("{\n  \"w\": {\"a\": 0.75, \"b\": 0.25},\n  \"n\\u0061me\": \"x\"\n}"), 8)
	if ca, cb := AppendCanonical(nil, &a), AppendCanonical(nil, &b); string(ca) != string(cb) {
		t.Errorf("canonical differs: %s vs %s", ca, cb)
	}
}

func TestWriterOutputIsValidJSON(t *testing.T) {
	in := `{"k":["<\u2028>",-0,1E+2,{"n":null,"t":true,"f":false}],"\u0000":"\ud83d\ude00"}`
	v, err := Parse([]byte(in), 8)
	if err != nil {
		t.Fatal(err)
	}
	for _, out := range [][]byte{AppendValue(nil, &v), AppendCanonical(nil, &v)} {
		if !json.Valid(out) || !utf8.Valid(out) {
			t.Errorf("invalid output %s", out)
		}
		v2, err := Parse(out, 8)
		if err != nil {
			t.Fatalf("reparse %s: %v", out, err)
		}
		if string(AppendCanonical(nil, &v2)) != string(AppendCanonical(nil, &v)) {
			t.Errorf("reparse changed canonical form: %s", out)
		}
	}
}

// AppendFloat's integer fast path must give exactly strconv's bytes.
func TestAppendFloatMatchesStrconv(t *testing.T) {
	check := func(x float64) {
		want := strconv.AppendFloat(nil, Round6(x), 'f', -1, 64)
		if got := AppendFloat(nil, x); string(got) != string(want) {
			t.Fatalf("AppendFloat(%v) = %s, strconv = %s", x, got, want)
		}
	}
	edges := []float64{0, 1, -1, 0.5, 1e-7, 4.9999999e-7, 5e-7, 0.1, 0.7, 0.9999995, 1 << 32, 1<<33 - 0.5, 1<<33 - 1e-6,
		-(1<<33 - 1e-6), 1 << 33, 8589934591.999999, 123456.654321, 2.675, 1.0000005, -0.0000015}
	for _, x := range edges {
		check(x)
		check(math.Nextafter(x, math.Inf(1)))
		check(math.Nextafter(x, math.Inf(-1)))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200000; i++ {
		switch i % 4 {
		case 0:
			check(rng.Float64()) // scores in [0,1]
		case 1:
			check((rng.Float64() - 0.5) * 200) // logits, bm25
		case 2:
			check(math.Float64frombits(rng.Uint64())) // any bit pattern
		default:
			check(float64(rng.Int64N(1<<34)-1<<33) / 1e6 * float64(1+rng.IntN(1000000)))
		}
	}
}

// PutFloat writes AppendFloat's bytes or nothing (|x| >= 2^33, not finite,
// too little room); PutPlain copies exactly the strings AppendString leaves
// as they are.
func TestPutFloatPutPlain(t *testing.T) {
	edges := []float64{0, 1, -1, 0.5, 1e-7, 4.9999999e-7, 5e-7, -5e-7, 0.1, 0.9999995, 1 << 32, 1<<33 - 1e-6,
		-(1<<33 - 1e-6), 1 << 33, -(1 << 33), 1e21, math.NaN(), math.Inf(1), math.Inf(-1), 123456.654321, -0.0000015}
	for _, x := range edges {
		for _, y := range []float64{x, math.Nextafter(x, math.Inf(1)), math.Nextafter(x, math.Inf(-1))} {
			checkPutFloat(t, y)
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 100000; i++ {
		checkPutFloat(t, (rng.Float64()-0.5)*float64(uint64(1)<<(i%40)))
		checkPutFloat(t, math.Float64frombits(rng.Uint64()))
	}
	if n := PutFloat(make([]byte, MaxPutFloat-1), 0.5); n != 0 {
		t.Fatalf("PutFloat wrote %d bytes into too little room", n)
	}
	for _, s := range []string{"", "S1", "kept", "doc-7", `a"b`, `a\b`, "a<b", "a>b", "a&b", "tab\t", "\x7f", "caf\u00e9", "\xff", "[S1]"} {
		checkPutPlain(t, s)
	}
	if n := PutPlain(make([]byte, 2), "abc"); n != -1 {
		t.Fatalf("PutPlain wrote past its room")
	}
}

func checkPutFloat(t *testing.T, x float64) {
	t.Helper()
	b := make([]byte, MaxPutFloat+3)
	n := PutFloat(b, x)
	fast := x > -(1<<33) && x < 1<<33
	if (n > 0) != fast {
		t.Fatalf("PutFloat(%v) wrote %d bytes", x, n)
	}
	if want := AppendFloat(nil, x); n > 0 && string(b[:n]) != string(want) {
		t.Fatalf("PutFloat(%v) = %s, AppendFloat %s", x, b[:n], want)
	}
}

func checkPutPlain(t *testing.T, s string) {
	t.Helper()
	b := make([]byte, len(s)+1)
	n := PutPlain(b, s)
	if plain := PlainLen(s, '"') == len(s); (n == len(s)) != plain || n != len(s) && n != -1 {
		t.Fatalf("PutPlain(%q) = %d, plain %v", s, n, plain)
	}
	if n >= 0 && string(b[:n]) != s {
		t.Fatalf("PutPlain(%q) copied %q", s, b[:n])
	}
}

func FuzzPutFloatPutPlain(f *testing.F) {
	f.Add(0.5, "S1")
	f.Add(-1e21, `a"b<`)
	f.Fuzz(func(t *testing.T, x float64, s string) {
		checkPutFloat(t, x)
		checkPutPlain(t, s)
	})
}

// TestNumberFinite holds the cheap overflow test to strconv over numbers
// around the largest float64, written every way the grammar allows.
func TestNumberFinite(t *testing.T) {
	mants := []string{"0", "1", "9", "1.7976931348623157", "1.7976931348623158", "1.7976931348623159", "1.8", "17.976931348623157",
		"0.00017976931348623157", "0.1", "0.000", "12345678901234567890", "0.0000000000000000000000001", "100"}
	for _, m := range mants {
		for _, e := range []int{-400, -308, 0, 1, 100, 290, 300, 305, 306, 307, 308, 309, 310, 311, 312, 330, 400, 99999} {
			for _, sign := range []string{"", "-"} {
				for _, form := range []string{"e", "E+"} {
					raw := sign + m + form + strconv.Itoa(e)
					if e < 0 && form == "E+" {
						raw = sign + m + "E" + strconv.Itoa(e)
					}
					f, _ := strconv.ParseFloat(raw, 64)
					if got, want := NumberFinite(raw), !math.IsInf(f, 0); got != want {
						t.Errorf("NumberFinite(%s) = %v, strconv says %v", raw, got, want)
					}
				}
			}
		}
	}
	long := "1" + strings.Repeat("7", 307)
	for _, raw := range []string{long, long + "7", long + "77", "-" + long + "77", "0." + long + "e310", "0.0" + long + "e311", strings.Repeat("9", 309)} {
		f, _ := strconv.ParseFloat(raw, 64)
		if got, want := NumberFinite(raw), !math.IsInf(f, 0); got != want {
			t.Errorf("NumberFinite(%.20s... %d digits) = %v, strconv says %v", raw, len(raw), got, want)
		}
	}
}

func FuzzNumberFinite(f *testing.F) {
	f.Add(uint64(17976931348623157), int16(292), uint8(3))
	f.Fuzz(func(t *testing.T, mant uint64, exp int16, point uint8) {
		digits := strconv.FormatUint(mant, 10)
		p := int(point) % (len(digits) + 1)
		raw := digits
		if p > 0 && p < len(digits) {
			raw = digits[:p] + "." + digits[p:]
		} else if p == len(digits) && p > 1 {
			raw = "0." + digits
		}
		if len(raw) > 1 && raw[0] == '0' && raw[1] != '.' {
			return // a leading zero: not the grammar
		}
		raw += "e" + strconv.Itoa(int(exp))
		v, _ := strconv.ParseFloat(raw, 64)
		if got, want := NumberFinite(raw), !math.IsInf(v, 0); got != want {
			t.Fatalf("NumberFinite(%s) = %v, strconv says %v", raw, got, want)
		}
	})
}

// TestNumberFiniteFollowsParseFloat: where ParseFloat stops being exact
// (huge digit counts, five-digit exponents), NumberFinite gives its answer.
func TestNumberFiniteFollowsParseFloat(t *testing.T) {
	for _, raw := range []string{"1" + strings.Repeat("7", 20000) + "e-19900", "1" + strings.Repeat("7", 100000) + "e-999999",
		"1" + strings.Repeat("7", 4000) + "e-999999", "0." + strings.Repeat("0", 500000) + "1e500005", "1e99999", "1e-99999", "1e00308", "1e000309"} {
		f, _ := strconv.ParseFloat(raw, 64)
		if got, want := NumberFinite(raw), !math.IsInf(f, 0); got != want {
			t.Errorf("NumberFinite(%.20s...%d bytes) = %v, ParseFloat finite %v", raw, len(raw), got, want)
		}
	}
}
