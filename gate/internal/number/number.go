// Package number converts JSON numbers as the request decoder reads them:
// bit for bit what strconv.ParseFloat gives, faster under TinyGo.
package number

import (
	"math"
	"math/bits"
	"strconv"

	"github.com/ctxgate/ctxgate/gate/internal/view"
)

// Numbers in the direct decoder: one pass reads a number's text, checks its
// grammar (jsonx's, which is RFC 8259's) and gathers its decimal mantissa
// and exponent; the conversion then needs no second scan.
//
// Why not strconv.ParseFloat for every number? Under TinyGo it cost ~0.3 us
// per number in the module (its general scan, then the same algorithms as
// below), and a retriever's scores are float64s printed shortest, mostly 16
// and 17 significant digits: 40 numbers were about a fifth of a 20-chunk
// request's decode. The result is the same bits: a conversion that is
// correctly rounded has one answer, and both paths below are correctly
// rounded or decline (TestParseNumberMatchesParseFloat, FuzzSimpleFloat,
// FuzzParseNumber check it against ParseFloat).
//
//   - Clinger's fast path: a mantissa below 2^53 and a power of ten up to
//     1e22 are both exact in a float64, so one IEEE division (or product)
//     rounds once, correctly.
//   - Otherwise Eisel-Lemire (as in Go's strconv, which it follows line by
//     line), with the 128-bit powers of ten for exponents -64..64 only:
//     enough for any score or embedding printed with up to 19 significant
//     digits; outside that range, with more digits, or in its rare
//     ambiguous cases it declines and ParseFloat decides.

// Parse reads the number text at s[i:] and converts it as
// jsonx.Value.Float does. end is where the text ends; ok is false when the
// text is not a JSON number or the value overflows (the tree parser
// rejects both).
func Parse(s []byte, i int) (f float64, end int, ok bool) {
	start := i
	neg := false
	if i < len(s) && s[i] == '-' {
		neg = true
		i++
	}
	if i >= len(s) {
		return 0, i, false
	}
	var mant uint64
	nd := 0       // significant digits in mant (leading zeros are not)
	slow := false // over 19 significant digits: ParseFloat
	if c := s[i] - '0'; c == 0 {
		i++
		if i < len(s) && s[i]-'0' < 10 {
			return 0, i, false // a leading zero
		}
	} else if c < 10 {
		mant, nd, i = eightDigits(s, i, mant, nd)
		for i < len(s) {
			c := s[i] - '0'
			if c >= 10 {
				break
			}
			if nd < 19 {
				mant = mant*10 + uint64(c)
				nd++
			} else {
				slow = true
			}
			i++
		}
	} else {
		return 0, i, false
	}
	exp := 0
	if i < len(s) && s[i] == '.' {
		i++
		first := i
		j := i
		mant, nd, i = eightDigits(s, i, mant, nd)
		exp -= i - j
		for i < len(s) {
			c := s[i] - '0'
			if c >= 10 {
				break
			}
			if nd < 19 {
				mant = mant*10 + uint64(c)
				if mant != 0 {
					nd++
				}
				exp--
			} else {
				slow = true
			}
			i++
		}
		if i == first {
			return 0, i, false
		}
	}
	if i < len(s) && s[i]|0x20 == 'e' {
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		first := i
		e := 0
		for i < len(s) && s[i]-'0' < 10 {
			if e < 100000 {
				e = e*10 + int(s[i]-'0')
			}
			i++
		}
		if i == first {
			return 0, i, false
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if !slow {
		if f, ok := decimalToFloat(mant, exp, neg); ok {
			return f, i, true
		}
		if f, ok := exactBinary(mant, exp, neg); ok {
			return f, i, true
		}
	}
	f, _ = strconv.ParseFloat(view.String(s[start:i]), 64)
	return f, i, Finite(f)
}

// eightDigits adds the digits at s[i:] to mant eight at a time while
// eight more fit in 19 (a score's 16-17 digits take two steps, not 17
// trips through a byte loop). nd may count leading zeros it took as
// significant: it only ever stops the gathering early, and then ParseFloat
// decides.
func eightDigits(s []byte, i int, mant uint64, nd int) (uint64, int, int) {
	for nd+8 <= 19 && i+8 <= len(s) {
		b := s[i : i+8]
		x := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		// All eight are '0'..'9': each byte is 0x30-0x3F and stays so
		// with 6 added.
		if x&0xF0F0F0F0F0F0F0F0 != 0x3030303030303030 ||
			(x+0x0606060606060606)&0xF0F0F0F0F0F0F0F0 != 0x3030303030303030 {
			break
		}
		// The first digit is the lowest byte: pairs, then fours, then
		// eight.
		x -= 0x3030303030303030
		x = (x*10 + x>>8) & 0x00FF00FF00FF00FF
		x = (x*100 + x>>16) & 0x0000FFFF0000FFFF
		x = (x*10000 + x>>32) & 0xFFFFFFFF
		mant = mant*100000000 + x
		if mant != 0 {
			nd += 8
		}
		i += 8
	}
	return mant, nd, i
}

// decimalToFloat is mant * 10^exp correctly rounded, or ok false when
// neither fast method can tell.
func decimalToFloat(mant uint64, exp int, neg bool) (float64, bool) {
	if mant>>53 == 0 && exp <= 0 && exp >= -22 {
		f := float64(mant) / pow10[-exp]
		if neg {
			f = -f
		}
		return f, true
	}
	return eiselLemire64(mant, exp, neg)
}

// exactBinary is mant * 10^exp when that is a binary fraction q / 2^-exp
// (q = mant / 5^-exp, an integer), which is where Eisel-Lemire declines
// most in practice: a float32 score printed as a float64 (BM25 engines
// keep float32s; 9.819000244140625 is one) is such a number, exactly on a
// halfway point of Eisel-Lemire's product. float64(q) is q correctly
// rounded and scaling by 2^exp (exp >= -27, so no subnormal) is exact, so
// the result is the correctly rounded value ParseFloat gives, without its
// general path (a seventieth of a 20-chunk decision in the module).
func exactBinary(mant uint64, exp int, neg bool) (float64, bool) {
	if exp >= 0 || exp < -len(pow5) || mant%pow5[-exp-1] != 0 {
		return 0, false
	}
	f := float64(mant/pow5[-exp-1]) * math.Float64frombits(uint64(1023+exp)<<52)
	if neg {
		f = -f
	}
	return f, true
}

// pow5[k] is 5^(k+1); 5^27 is the largest power of five below 2^64.
var pow5 = func() (p [27]uint64) {
	x := uint64(1)
	for k := range p {
		x *= 5
		p[k] = x
	}
	return p
}()

// eiselLemire64 is strconv's (internal/strconv/atofeisel.go, Go 1.26) over
// the table below. It and the table are the Go project's code:
//
//	Copyright 2020 The Go Authors. All rights reserved.
//	Use of this source code is governed by a BSD-style
//	license that can be found in the LICENSE file.
//
// That licence is gate/LICENSE.golang.
func eiselLemire64(man uint64, exp10 int, neg bool) (float64, bool) {
	if man == 0 {
		if neg {
			return math.Float64frombits(1 << 63), true
		}
		return 0, true
	}
	if exp10 < pow10TabMin || exp10 > pow10TabMin+len(pow10Tab)-1 {
		return 0, false
	}
	pow := &pow10Tab[exp10-pow10TabMin]
	exp2 := 1 + (exp10*108853)>>15 // floor(exp10 * log2(10))

	// Normalization.
	clz := bits.LeadingZeros64(man)
	man <<= uint(clz)
	const float64Bias = -1023
	retExp2 := uint64(exp2+63-float64Bias) - uint64(clz)

	// Multiplication.
	xHi, xLo := bits.Mul64(man, pow[0])

	// Wider Approximation.
	if xHi&0x1FF == 0x1FF && xLo+man < man {
		yHi, yLo := bits.Mul64(man, pow[1])
		mergedHi, mergedLo := xHi, xLo+yHi
		if mergedLo < xLo {
			mergedHi++
		}
		if mergedHi&0x1FF == 0x1FF && mergedLo+1 == 0 && yLo+man < man {
			return 0, false
		}
		xHi, xLo = mergedHi, mergedLo
	}

	// Shifting to 54 Bits.
	msb := xHi >> 63
	retMantissa := xHi >> (msb + 9)
	retExp2 -= 1 ^ msb

	// Half-way Ambiguity.
	if xLo == 0 && xHi&0x1FF == 0 && retMantissa&3 == 1 {
		return 0, false
	}

	// From 54 to 53 Bits.
	retMantissa += retMantissa & 1
	retMantissa >>= 1
	if retMantissa>>53 > 0 {
		retMantissa >>= 1
		retExp2++
	}
	// Zero or underflow: subnormal; 0x7FF or above: Inf or NaN.
	if retExp2-1 >= 0x7FF-1 {
		return 0, false
	}
	retBits := retExp2<<52 | retMantissa&(1<<52-1)
	if neg {
		retBits |= 1 << 63
	}
	return math.Float64frombits(retBits), true
}

// pow10TabMin is the exponent of pow10Tab[0].
const pow10TabMin = -64

// pow10Tab holds 10^e for e = -64..64 as 128-bit mantissas {hi, lo},
// scaled so the high bit is set: rows -64..64 of Go's
// internal/strconv/pow10tab.go (TestPow10Tab recomputes them).
var pow10Tab = [...][2]uint64{
	{0xa87fea27a539e9a5, 0x3f2398d747b36224}, // 1e-64
	{0xd29fe4b18e88640e, 0x8eec7f0d19a03aad}, // 1e-63
	{0x83a3eeeef9153e89, 0x1953cf68300424ac}, // 1e-62
	{0xa48ceaaab75a8e2b, 0x5fa8c3423c052dd7}, // 1e-61
	{0xcdb02555653131b6, 0x3792f412cb06794d}, // 1e-60
	{0x808e17555f3ebf11, 0xe2bbd88bbee40bd0}, // 1e-59
	{0xa0b19d2ab70e6ed6, 0x5b6aceaeae9d0ec4}, // 1e-58
	{0xc8de047564d20a8b, 0xf245825a5a445275}, // 1e-57
	{0xfb158592be068d2e, 0xeed6e2f0f0d56712}, // 1e-56
	{0x9ced737bb6c4183d, 0x55464dd69685606b}, // 1e-55
	{0xc428d05aa4751e4c, 0xaa97e14c3c26b886}, // 1e-54
	{0xf53304714d9265df, 0xd53dd99f4b3066a8}, // 1e-53
	{0x993fe2c6d07b7fab, 0xe546a8038efe4029}, // 1e-52
	{0xbf8fdb78849a5f96, 0xde98520472bdd033}, // 1e-51
	{0xef73d256a5c0f77c, 0x963e66858f6d4440}, // 1e-50
	{0x95a8637627989aad, 0xdde7001379a44aa8}, // 1e-49
	{0xbb127c53b17ec159, 0x5560c018580d5d52}, // 1e-48
	{0xe9d71b689dde71af, 0xaab8f01e6e10b4a6}, // 1e-47
	{0x9226712162ab070d, 0xcab3961304ca70e8}, // 1e-46
	{0xb6b00d69bb55c8d1, 0x3d607b97c5fd0d22}, // 1e-45
	{0xe45c10c42a2b3b05, 0x8cb89a7db77c506a}, // 1e-44
	{0x8eb98a7a9a5b04e3, 0x77f3608e92adb242}, // 1e-43
	{0xb267ed1940f1c61c, 0x55f038b237591ed3}, // 1e-42
	{0xdf01e85f912e37a3, 0x6b6c46dec52f6688}, // 1e-41
	{0x8b61313bbabce2c6, 0x2323ac4b3b3da015}, // 1e-40
	{0xae397d8aa96c1b77, 0xabec975e0a0d081a}, // 1e-39
	{0xd9c7dced53c72255, 0x96e7bd358c904a21}, // 1e-38
	{0x881cea14545c7575, 0x7e50d64177da2e54}, // 1e-37
	{0xaa242499697392d2, 0xdde50bd1d5d0b9e9}, // 1e-36
	{0xd4ad2dbfc3d07787, 0x955e4ec64b44e864}, // 1e-35
	{0x84ec3c97da624ab4, 0xbd5af13bef0b113e}, // 1e-34
	{0xa6274bbdd0fadd61, 0xecb1ad8aeacdd58e}, // 1e-33
	{0xcfb11ead453994ba, 0x67de18eda5814af2}, // 1e-32
	{0x81ceb32c4b43fcf4, 0x80eacf948770ced7}, // 1e-31
	{0xa2425ff75e14fc31, 0xa1258379a94d028d}, // 1e-30
	{0xcad2f7f5359a3b3e, 0x096ee45813a04330}, // 1e-29
	{0xfd87b5f28300ca0d, 0x8bca9d6e188853fc}, // 1e-28
	{0x9e74d1b791e07e48, 0x775ea264cf55347d}, // 1e-27
	{0xc612062576589dda, 0x95364afe032a819d}, // 1e-26
	{0xf79687aed3eec551, 0x3a83ddbd83f52204}, // 1e-25
	{0x9abe14cd44753b52, 0xc4926a9672793542}, // 1e-24
	{0xc16d9a0095928a27, 0x75b7053c0f178293}, // 1e-23
	{0xf1c90080baf72cb1, 0x5324c68b12dd6338}, // 1e-22
	{0x971da05074da7bee, 0xd3f6fc16ebca5e03}, // 1e-21
	{0xbce5086492111aea, 0x88f4bb1ca6bcf584}, // 1e-20
	{0xec1e4a7db69561a5, 0x2b31e9e3d06c32e5}, // 1e-19
	{0x9392ee8e921d5d07, 0x3aff322e62439fcf}, // 1e-18
	{0xb877aa3236a4b449, 0x09befeb9fad487c2}, // 1e-17
	{0xe69594bec44de15b, 0x4c2ebe687989a9b3}, // 1e-16
	{0x901d7cf73ab0acd9, 0x0f9d37014bf60a10}, // 1e-15
	{0xb424dc35095cd80f, 0x538484c19ef38c94}, // 1e-14
	{0xe12e13424bb40e13, 0x2865a5f206b06fb9}, // 1e-13
	{0x8cbccc096f5088cb, 0xf93f87b7442e45d3}, // 1e-12
	{0xafebff0bcb24aafe, 0xf78f69a51539d748}, // 1e-11
	{0xdbe6fecebdedd5be, 0xb573440e5a884d1b}, // 1e-10
	{0x89705f4136b4a597, 0x31680a88f8953030}, // 1e-9
	{0xabcc77118461cefc, 0xfdc20d2b36ba7c3d}, // 1e-8
	{0xd6bf94d5e57a42bc, 0x3d32907604691b4c}, // 1e-7
	{0x8637bd05af6c69b5, 0xa63f9a49c2c1b10f}, // 1e-6
	{0xa7c5ac471b478423, 0x0fcf80dc33721d53}, // 1e-5
	{0xd1b71758e219652b, 0xd3c36113404ea4a8}, // 1e-4
	{0x83126e978d4fdf3b, 0x645a1cac083126e9}, // 1e-3
	{0xa3d70a3d70a3d70a, 0x3d70a3d70a3d70a3}, // 1e-2
	{0xcccccccccccccccc, 0xcccccccccccccccc}, // 1e-1
	{0x8000000000000000, 0x0000000000000000}, // 1e0
	{0xa000000000000000, 0x0000000000000000}, // 1e1
	{0xc800000000000000, 0x0000000000000000}, // 1e2
	{0xfa00000000000000, 0x0000000000000000}, // 1e3
	{0x9c40000000000000, 0x0000000000000000}, // 1e4
	{0xc350000000000000, 0x0000000000000000}, // 1e5
	{0xf424000000000000, 0x0000000000000000}, // 1e6
	{0x9896800000000000, 0x0000000000000000}, // 1e7
	{0xbebc200000000000, 0x0000000000000000}, // 1e8
	{0xee6b280000000000, 0x0000000000000000}, // 1e9
	{0x9502f90000000000, 0x0000000000000000}, // 1e10
	{0xba43b74000000000, 0x0000000000000000}, // 1e11
	{0xe8d4a51000000000, 0x0000000000000000}, // 1e12
	{0x9184e72a00000000, 0x0000000000000000}, // 1e13
	{0xb5e620f480000000, 0x0000000000000000}, // 1e14
	{0xe35fa931a0000000, 0x0000000000000000}, // 1e15
	{0x8e1bc9bf04000000, 0x0000000000000000}, // 1e16
	{0xb1a2bc2ec5000000, 0x0000000000000000}, // 1e17
	{0xde0b6b3a76400000, 0x0000000000000000}, // 1e18
	{0x8ac7230489e80000, 0x0000000000000000}, // 1e19
	{0xad78ebc5ac620000, 0x0000000000000000}, // 1e20
	{0xd8d726b7177a8000, 0x0000000000000000}, // 1e21
	{0x878678326eac9000, 0x0000000000000000}, // 1e22
	{0xa968163f0a57b400, 0x0000000000000000}, // 1e23
	{0xd3c21bcecceda100, 0x0000000000000000}, // 1e24
	{0x84595161401484a0, 0x0000000000000000}, // 1e25
	{0xa56fa5b99019a5c8, 0x0000000000000000}, // 1e26
	{0xcecb8f27f4200f3a, 0x0000000000000000}, // 1e27
	{0x813f3978f8940984, 0x4000000000000000}, // 1e28
	{0xa18f07d736b90be5, 0x5000000000000000}, // 1e29
	{0xc9f2c9cd04674ede, 0xa400000000000000}, // 1e30
	{0xfc6f7c4045812296, 0x4d00000000000000}, // 1e31
	{0x9dc5ada82b70b59d, 0xf020000000000000}, // 1e32
	{0xc5371912364ce305, 0x6c28000000000000}, // 1e33
	{0xf684df56c3e01bc6, 0xc732000000000000}, // 1e34
	{0x9a130b963a6c115c, 0x3c7f400000000000}, // 1e35
	{0xc097ce7bc90715b3, 0x4b9f100000000000}, // 1e36
	{0xf0bdc21abb48db20, 0x1e86d40000000000}, // 1e37
	{0x96769950b50d88f4, 0x1314448000000000}, // 1e38
	{0xbc143fa4e250eb31, 0x17d955a000000000}, // 1e39
	{0xeb194f8e1ae525fd, 0x5dcfab0800000000}, // 1e40
	{0x92efd1b8d0cf37be, 0x5aa1cae500000000}, // 1e41
	{0xb7abc627050305ad, 0xf14a3d9e40000000}, // 1e42
	{0xe596b7b0c643c719, 0x6d9ccd05d0000000}, // 1e43
	{0x8f7e32ce7bea5c6f, 0xe4820023a2000000}, // 1e44
	{0xb35dbf821ae4f38b, 0xdda2802c8a800000}, // 1e45
	{0xe0352f62a19e306e, 0xd50b2037ad200000}, // 1e46
	{0x8c213d9da502de45, 0x4526f422cc340000}, // 1e47
	{0xaf298d050e4395d6, 0x9670b12b7f410000}, // 1e48
	{0xdaf3f04651d47b4c, 0x3c0cdd765f114000}, // 1e49
	{0x88d8762bf324cd0f, 0xa5880a69fb6ac800}, // 1e50
	{0xab0e93b6efee0053, 0x8eea0d047a457a00}, // 1e51
	{0xd5d238a4abe98068, 0x72a4904598d6d880}, // 1e52
	{0x85a36366eb71f041, 0x47a6da2b7f864750}, // 1e53
	{0xa70c3c40a64e6c51, 0x999090b65f67d924}, // 1e54
	{0xd0cf4b50cfe20765, 0xfff4b4e3f741cf6d}, // 1e55
	{0x82818f1281ed449f, 0xbff8f10e7a8921a4}, // 1e56
	{0xa321f2d7226895c7, 0xaff72d52192b6a0d}, // 1e57
	{0xcbea6f8ceb02bb39, 0x9bf4f8a69f764490}, // 1e58
	{0xfee50b7025c36a08, 0x02f236d04753d5b4}, // 1e59
	{0x9f4f2726179a2245, 0x01d762422c946590}, // 1e60
	{0xc722f0ef9d80aad6, 0x424d3ad2b7b97ef5}, // 1e61
	{0xf8ebad2b84e0d58b, 0xd2e0898765a7deb2}, // 1e62
	{0x9b934c3b330c8577, 0x63cc55f49f88eb2f}, // 1e63
	{0xc2781f49ffcfa6d5, 0x3cbf6b71c76b25fb}, // 1e64
}

// pow10 are the powers of ten a float64 holds exactly.
var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// Finite reports whether f is neither infinite nor NaN.
func Finite(f float64) bool {
	return f <= 1.7976931348623157e308 && f >= -1.7976931348623157e308
}
