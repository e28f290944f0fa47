package host

// A hand-assembled guest that misbehaves on request, to force every fault the
// pool must survive. It speaks the real Extism kernel ABI, so the faults go
// through the same path as the real modules'. Its behaviour is chosen by the
// first input byte:
//
//	(empty)  succeed with empty output (so warm-up passes)
//	'L'      loop forever
//	'T'      trap (unreachable)
//	'G'      grow memory one page at a time until refused, then output the
//	         final size in pages as 4 bytes little-endian
//	'X'      return 1 without setting an error
//	'E'      set the rest of the input as the error, return 1
//	other    echo the input
//
// Assembling it in the test keeps it in step with the test and needs no WAT
// toolchain.

import "encoding/binary"

func hostileModule() []byte {
	const (
		i32, i64 = 0x7f, 0x7e
		// imports, in index order
		fInputLength, fInputLoadU8, fAlloc, fStoreU8, fOutputSet, fErrorSet = 0, 1, 2, 3, 4, 5
		// locals
		lN, lP, lI, lStart, lC = 0, 1, 2, 3, 4
	)
	functype := func(params, results []byte) []byte {
		b := append([]byte{0x60}, vec(len(params))...)
		b = append(b, params...)
		b = append(b, vec(len(results))...)
		return append(b, results...)
	}
	types := [][]byte{
		functype(nil, []byte{i64}),         // 0 input_length
		functype([]byte{i64}, []byte{i32}), // 1 input_load_u8
		functype([]byte{i64}, []byte{i64}), // 2 alloc
		functype([]byte{i64, i32}, nil),    // 3 store_u8
		functype([]byte{i64, i64}, nil),    // 4 output_set
		functype([]byte{i64}, nil),         // 5 error_set
		functype(nil, []byte{i32}),         // 6 the export
	}
	imports := []struct {
		name string
		typ  byte
	}{{"input_length", 0}, {"input_load_u8", 1}, {"alloc", 2}, {"store_u8", 3}, {"output_set", 4}, {"error_set", 5}}

	var c code
	// n = input_length(); if n == 0 { return 0 }
	c.op(0x10, fInputLength).op(0x21, lN)
	c.op(0x20, lN).op(0x50).op(0x04, 0x40).i32(0).op(0x0f).op(0x0b)
	// c = input_load_u8(0)
	c.i64(0).op(0x10, fInputLoadU8).op(0x21, lC)
	// 'L': loop { br 0 }
	c.isByte(lC, 'L').op(0x04, 0x40).op(0x03, 0x40).op(0x0c, 0).op(0x0b).op(0x0b)
	// 'T': unreachable
	c.isByte(lC, 'T').op(0x04, 0x40).op(0x00).op(0x0b)
	// 'X': return 1
	c.isByte(lC, 'X').op(0x04, 0x40).i32(1).op(0x0f).op(0x0b)
	// 'G': block { loop { br_if 1 (memory.grow(1) == -1); br 0 } }; output memory.size
	c.isByte(lC, 'G').op(0x04, 0x40)
	c.op(0x02, 0x40).op(0x03, 0x40).i32(1).op(0x40, 0x00).i32(-1).op(0x46).op(0x0d, 1).op(0x0c, 0).op(0x0b).op(0x0b)
	c.op(0x3f, 0x00).op(0xad).op(0x21, lI)
	c.i64(4).op(0x10, fAlloc).op(0x21, lP)
	for k := int64(0); k < 4; k++ {
		// store_u8(p+k, (size >> 8k) & 255)
		c.op(0x20, lP).i64(k).op(0x7c)
		c.op(0x20, lI).i64(8 * k).op(0x88).i64(255).op(0x83).op(0xa7)
		c.op(0x10, fStoreU8)
	}
	c.op(0x20, lP).i64(4).op(0x10, fOutputSet).i32(0).op(0x0f)
	c.op(0x0b)
	// start = c == 'E' ? 1 : 0
	c.isByte(lC, 'E').op(0xad).op(0x21, lStart)
	// p = alloc(n - start); i = start
	c.op(0x20, lN).op(0x20, lStart).op(0x7d).op(0x10, fAlloc).op(0x21, lP)
	c.op(0x20, lStart).op(0x21, lI)
	// block { loop { if !(i < n) break; store_u8(p+i-start, input_load_u8(i)); i++; br 0 } }
	c.op(0x02, 0x40).op(0x03, 0x40)
	c.op(0x20, lI).op(0x20, lN).op(0x54).op(0x45).op(0x0d, 1)
	c.op(0x20, lP).op(0x20, lI).op(0x7c).op(0x20, lStart).op(0x7d)
	c.op(0x20, lI).op(0x10, fInputLoadU8).op(0x10, fStoreU8)
	c.op(0x20, lI).i64(1).op(0x7c).op(0x21, lI).op(0x0c, 0)
	c.op(0x0b).op(0x0b)
	// 'E': error_set(p); return 1
	c.isByte(lC, 'E').op(0x04, 0x40).op(0x20, lP).op(0x10, fErrorSet).i32(1).op(0x0f).op(0x0b)
	// output_set(p, n - start); return 0
	c.op(0x20, lP).op(0x20, lN).op(0x20, lStart).op(0x7d).op(0x10, fOutputSet).i32(0)
	c.op(0x0b)

	body := append([]byte{2, 4, i64, 1, i32}, c.b...) // locals: 4 x i64, 1 x i32
	body = append(uleb(uint64(len(body))), body...)

	var m []byte
	m = append(m, 0, 'a', 's', 'm', 1, 0, 0, 0)
	var sec []byte
	sec = vec(len(types))
	for _, t := range types {
		sec = append(sec, t...)
	}
	m = section(m, 1, sec)
	sec = vec(len(imports))
	for _, im := range imports {
		sec = append(sec, str("extism:host/env")...)
		sec = append(sec, str(im.name)...)
		sec = append(sec, 0x00, im.typ)
	}
	m = section(m, 2, sec)
	m = section(m, 3, []byte{1, 6})       // one function, type 6
	m = section(m, 5, []byte{1, 0x00, 1}) // one memory, min 1 page, no max
	sec = vec(4)
	for _, name := range []string{"evaluate", "validate", "describe"} {
		sec = append(sec, str(name)...)
		sec = append(sec, 0x00, 6) // function 6 (after the 6 imports)
	}
	sec = append(sec, str("memory")...)
	sec = append(sec, 0x02, 0)
	m = section(m, 7, sec)
	m = section(m, 10, append(vec(1), body...))
	return m
}

type code struct{ b []byte }

func (c *code) op(b ...byte) *code { c.b = append(c.b, b...); return c }
func (c *code) i32(v int32) *code  { c.b = append(append(c.b, 0x41), sleb(int64(v))...); return c }
func (c *code) i64(v int64) *code  { c.b = append(append(c.b, 0x42), sleb(v)...); return c }

// isByte leaves (local == ch) as an i32 on the stack.
func (c *code) isByte(local byte, ch byte) *code {
	return c.op(0x20, local).i32(int32(ch)).op(0x46)
}

func section(m []byte, id byte, contents []byte) []byte {
	m = append(m, id)
	m = append(m, uleb(uint64(len(contents)))...)
	return append(m, contents...)
}

func vec(n int) []byte { return uleb(uint64(n)) }

func str(s string) []byte { return append(uleb(uint64(len(s))), s...) }

func uleb(v uint64) []byte { return binary.AppendUvarint(nil, v) }

func sleb(v int64) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
