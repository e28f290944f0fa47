package swar

import "testing"

func TestLoad64(t *testing.T) {
	if got := Load64("xx\x01\x02\x03\x04\x05\x06\x07\x08", 2); got != 0x0807060504030201 {
		t.Fatalf("Load64 = %#x", got)
	}
}

// HasByte marks the first byte equal to c exactly; bytes after it may be
// marked too, never one before it.
func TestHasByte(t *testing.T) {
	s := "abc<def"
	for c := 0; c < 256; c++ {
		x := Load64(s+"\x00", 0)
		m := HasByte(x, byte(c))
		first := -1
		for i := 0; i < 8; i++ {
			if (s + "\x00")[i] == byte(c) {
				first = i
				break
			}
		}
		switch {
		case first < 0 && m != 0:
			t.Fatalf("c=%#x: marked %#x, no such byte", c, m)
		case first >= 0 && (m == 0 || m&(1<<(8*first+7)) == 0 || m&(1<<(8*first)-1) != 0):
			t.Fatalf("c=%#x: marked %#x, first at %d", c, m, first)
		}
	}
}
