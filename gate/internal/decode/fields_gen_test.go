//go:build !tinygo

package decode

import (
	"bytes"
	"os"
	"testing"

	"github.com/ctxgate/ctxgate/gate/internal/fieldtab"
)

// TestFieldsGenerated: the committed field table is what the wire types'
// json tags give (go generate ./gate/internal/decode rewrites it).
func TestFieldsGenerated(t *testing.T) {
	want, err := fieldtab.Generate("decode", fieldtab.Schema())
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("fields_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("fields_gen.go is not what the wire types declare: run go generate ./gate/internal/decode")
	}
}
