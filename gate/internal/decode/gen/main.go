// Command gen writes fields_gen.go, the request decoders' field table,
// from the json tags of the wire types (gate/internal/fieldtab). Run it
// with go generate ./gate/internal/decode.
package main

import (
	"fmt"
	"os"

	"github.com/ctxgate/ctxgate/gate/internal/fieldtab"
)

func main() {
	src, err := fieldtab.Generate("decode", fieldtab.Schema())
	if err == nil {
		err = os.WriteFile("fields_gen.go", src, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
