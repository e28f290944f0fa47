package number

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// Parse must give exactly strconv.ParseFloat's bits, and accept
// exactly jsonx's number grammar: scores as retrievers print them (16-17
// significant digits), the fast paths' edges (2^53, 1e22, 19 digits, the
// table's exponents -64..64) and what lies past them (ParseFloat).
func TestParseNumberMatchesParseFloat(t *testing.T) {
	for _, s := range []string{"0", "-0", "0.0", "1", "-1", "0.1", "0.2", "0.3", "0.8234567891234", "123456789012345",
		"1234567890123456", "0.000000000000000000001", "0.0000000000000000000001", "20.5", "0.0163", "-37.5",
		"999999999999999", "0.999999999999999", "9007199254740993", "3.141592653589793", "1.7976931348623157",
		"0.8909168243408203", "0.86511623859405518", "12.345678901234567", "9007199254740992", "9007199254740991.5",
		"18446744073709551615", "1844674407370955161", "9999999999999999999", "0.00000000000000000000000000000001234567",
		"1e22", "1e23", "1E-5", "-2.5e-05", "1.2345678901234567e-64", "1.2345678901234567e-65", "9.87654321e64",
		"9.87654321e65", "1e308", "1.7976931348623157e308", "1.7976931348623159e308", "1e309", "1e-400", "-1e-400",
		"4.9e-324", "2.2250738585072011e-308", "2.2250738585072014e-308", "0.1e1", "00", "01", "-", "-a", ".5", "5.",
		"1e", "1e+", "1.5e+3", "1.5E-0003", "123456789012345678901234567890", "0.000000000000000000000000000000000000000000001",
		"7.038531e-26", "1.00000000000000011102230246251565404236316680908203125", "9223372036854775807", "4503599627370497.5",
		// Binary fractions (float32 scores printed as float64s): exactBinary.
		"9.819000244140625", "-9.819000244140625", "0.5", "0.000000007450580596923828125", "0.0000000037252902984619140625",
		"4503599627370496.5", "9007199254740993.5", "18014398509481985.25", "1.00000000000000011102230246251565404236316680908203125"} {
		checkParseNumber(t, s)
	}
}

// checkParseNumber compares Parse on s (as a whole JSON value) with
// the jsonx grammar and strconv.ParseFloat.
func checkParseNumber(t *testing.T, s string) {
	t.Helper()
	if strings.Trim(s, " \t\n\r") != s {
		return // jsonx takes white space around a value; Parse is called past it
	}
	v, perr := jsonx.Parse([]byte(s), 4)
	isNum := perr == nil && v.Kind() == jsonx.Number // an overflow is an error
	f, end, ok := Parse([]byte(s), 0)
	if whole := ok && end == len(s); whole != isNum {
		t.Fatalf("Parse(%q) = %v, end %d, ok %v; jsonx: %v", s, f, end, ok, perr)
	}
	if !isNum {
		return
	}
	want, _ := strconv.ParseFloat(s, 64)
	if math.Float64bits(f) != math.Float64bits(want) {
		t.Fatalf("Parse(%q) = %v (%x), ParseFloat %v (%x)", s, f, math.Float64bits(f), want, math.Float64bits(want))
	}
}

// FuzzSimpleFloat builds decimals (up to 20 digits, up to 23 after the
// point, an optional exponent) for Parse against ParseFloat.
func FuzzSimpleFloat(f *testing.F) {
	f.Add(uint64(8234567891234), uint8(13), false)
	f.Add(uint64(5), uint8(1), true)
	f.Add(uint64(86511623859405518), uint8(17), false)
	f.Fuzz(func(t *testing.T, mant uint64, frac uint8, neg bool) {
		s := strconv.FormatUint(mant, 10)
		if k := int(frac % 24); k > 0 {
			for len(s) <= k {
				s = "0" + s
			}
			s = s[:len(s)-k] + "." + s[len(s)-k:]
		}
		if neg {
			s = "-" + s
		}
		if frac >= 128 {
			s += "e" + strconv.Itoa(int(frac%96)-48)
		}
		checkParseNumber(t, s)
	})
}

// FuzzParseNumber is Parse on any text against jsonx and ParseFloat.
func FuzzParseNumber(f *testing.F) {
	for _, s := range []string{"0", "-0.5", "1e5", "0.86511623859405518", "1.2e-70", "01", "1.", "-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkParseNumber(t, s)
	})
}

// Float32 scores printed as float64s (as BM25 engines report them) are
// often binary fractions that Eisel-Lemire declines (exactBinary): every
// 4099th float32 from 2^-30 up to 2^30, positive and negative.
func TestParseFloat32Scores(t *testing.T) {
	lo, hi := math.Float32bits(0x1p-30), math.Float32bits(0x1p30)
	for b := lo; b < hi; b += 4099 {
		x := float64(math.Float32frombits(b))
		checkParseNumber(t, strconv.FormatFloat(x, 'g', -1, 64))
		checkParseNumber(t, strconv.FormatFloat(-x, 'f', -1, 64))
	}
}
