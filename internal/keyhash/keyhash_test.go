package keyhash

import "testing"

// Known values (from the hash as bench/eval.IsTune first wrote it) pin
// it: a split that was reported must not move.
func TestSum64(t *testing.T) {
	for _, c := range []struct {
		parts []string
		want  uint64
	}{
		{nil, 0xefd01f60ba992926},
		{[]string{"dl19:1037798"}, 0x74db1b3a38c2ff57},
		{[]string{"dl19:", "1037798"}, 0x74db1b3a38c2ff57},
		{[]string{"clapnq:abc"}, 0xb69831d388436438},
		{[]string{"\x07\x00\x00\x00\x00\x00\x00\x00", "e:12"}, 0x61528a97ed5141d6},
	} {
		if got := Sum64(c.parts...); got != c.want {
			t.Errorf("Sum64(%q) = %#x, want %#x", c.parts, got, c.want)
		}
	}
}
