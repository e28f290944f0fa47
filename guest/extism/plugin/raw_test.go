package plugin

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxgate/ctxgate/internal/abi"
)

// Raw gives exactly the bytes of the Extism-side methods for every golden
// request (decoded in place, into a reused buffer), for answers and for
// describe, across calls of growing and shrinking size.
func TestRawMatchesPlugin(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "requests", "default", "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden requests: %v", err)
	}
	p := New(nil)
	r := NewRaw(New(nil))
	call := func(op abi.Op, in []byte) ([]byte, bool) {
		copy(r.Input(len(in)), in)
		out, isErr := r.Call(op, len(in))
		return append([]byte(nil), out...), isErr
	}
	check := func(name string, op abi.Op, in, want, wantErr []byte) {
		t.Helper()
		got, isErr := call(op, in)
		if isErr != (wantErr != nil) || (isErr && !bytes.Equal(got, wantErr)) || (!isErr && !bytes.Equal(got, want)) {
			t.Errorf("%s: raw %s (error %v)\nplugin %s%s", name, got, isErr, want, wantErr)
		}
	}
	for _, path := range paths {
		req, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		want, wantErr := p.Evaluate(append([]byte(nil), req...))
		check(filepath.Base(path), abi.OpEvaluate, req, want, wantErr)
	}
	for _, in := range []string{``, `{`, `{"query":42}`, `[]`} {
		want, wantErr := p.Evaluate([]byte(in))
		check("bad "+in, abi.OpEvaluate, []byte(in), want, wantErr)
	}
	for _, in := range []string{`{"answer":"It is [S1].","tags":["S1"]}`, `{"answer":3}`} {
		want, wantErr := p.Validate([]byte(in))
		check("answer "+in, abi.OpValidate, []byte(in), want, wantErr)
	}
	want, wantErr := p.Describe()
	check("describe", abi.OpDescribe, nil, want, wantErr)
	if _, isErr := r.Call(abi.Op(9), 0); !isErr {
		t.Error("unknown op: no error")
	}
	if _, isErr := r.Call(abi.OpEvaluate, 1<<30); !isErr {
		t.Error("length beyond the input buffer: no error")
	}
}

// The input buffer keeps its address while inputs fit (hosts skip the
// export then) and is never shorter than asked.
func TestRawInputReuse(t *testing.T) {
	r := NewRaw(New(nil))
	a := r.Input(100)
	b := r.Input(40)
	if len(a) != 100 || len(b) != 40 || &a[0] != &b[0] {
		t.Fatalf("a %d, b %d bytes, same address %v", len(a), len(b), &a[0] == &b[0])
	}
	if c := r.Input(1000); len(c) != 1000 {
		t.Fatalf("grown input is %d bytes", len(c))
	}
	if r.Input(-1) != nil {
		t.Fatal("negative length gave a buffer")
	}
	if e := r.Input(0); cap(e) == 0 {
		t.Fatal("empty input has no address")
	}
}
