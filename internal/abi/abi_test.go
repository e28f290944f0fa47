package abi

import "testing"

// Pack and Unpack are inverse at the edges of every field, and the packed
// bits are where docs/abi.md says they are.
func TestPack(t *testing.T) {
	for _, tc := range []struct {
		addr, n uint32
		isErr   bool
		want    uint64
	}{
		{0, 0, false, 0},
		{0, 0, true, 0x0000_0000_8000_0000},
		{1, 1, false, 0x0000_0001_0000_0001},
		{0x0001_2340, 417, false, 0x0001_2340_0000_01a1},
		{0x0001_2340, 92, true, 0x0001_2340_8000_005c},
		{0xffff_ffff, 0, false, 0xffff_ffff_0000_0000},
		{0xffff_ffff, MaxLength, false, 0xffff_ffff_7fff_ffff},
		{0xffff_ffff, MaxLength, true, 0xffff_ffff_ffff_ffff},
		{0, MaxLength, true, 0x0000_0000_ffff_ffff},
	} {
		got := Pack(tc.addr, tc.n, tc.isErr)
		if got != tc.want {
			t.Errorf("Pack(%#x, %d, %v) = %#016x, want %#016x", tc.addr, tc.n, tc.isErr, got, tc.want)
		}
		addr, n, isErr := Unpack(got)
		if addr != tc.addr || n != tc.n || isErr != tc.isErr {
			t.Errorf("Unpack(%#016x) = (%#x, %d, %v), want (%#x, %d, %v)", got, addr, n, isErr, tc.addr, tc.n, tc.isErr)
		}
	}
}

// A length past MaxLength cannot be packed: it would read as the error bit.
// Pack drops the high bit rather than flip isErr (the guest never asks).
func TestPackLengthOverflow(t *testing.T) {
	addr, n, isErr := Unpack(Pack(8, MaxLength+1, false))
	if addr != 8 || n != 0 || isErr {
		t.Errorf("got (%d, %d, %v), want (8, 0, false)", addr, n, isErr)
	}
}

// Every op has a name, the names are the Extism exports', and OpNamed
// inverts Name.
func TestOpNames(t *testing.T) {
	want := map[Op]string{OpEvaluate: "evaluate", OpValidate: "validate", OpDescribe: "describe"}
	for op, name := range want {
		if got := op.Name(); got != name {
			t.Errorf("Op(%d).Name() = %q, want %q", op, got, name)
		}
		if got, ok := OpNamed(name); !ok || got != op {
			t.Errorf("OpNamed(%q) = %d, %v", name, got, ok)
		}
	}
	for _, op := range []Op{3, 0xffff_ffff} {
		if name := op.Name(); name != "" {
			t.Errorf("Op(%d).Name() = %q, want none", op, name)
		}
	}
	for _, name := range []string{"", "Evaluate", "ctxgate_call", "evaluate "} {
		if op, ok := OpNamed(name); ok {
			t.Errorf("OpNamed(%q) = %d, want none", name, op)
		}
	}
}
