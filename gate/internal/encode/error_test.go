package encode

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ctxgate/ctxgate/gate/internal/decode"
	"github.com/ctxgate/ctxgate/gate/wire"
)

func TestAppendError(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{wire.Errorf(wire.CodeBadField, "chunks[2].scores.vector", "101.9 is not a cosine similarity; set vector_metric to dot"),
			`{"error":{"code":"bad_field","message":"101.9 is not a cosine similarity; set vector_metric to dot","field":"chunks[2].scores.vector"}}`},
		{wire.Errorf(wire.CodeBadJSON, "", "empty request"), `{"error":{"code":"bad_json","message":"empty request","field":""}}`},
		{fmt.Errorf("host: %w", wire.Errorf(wire.CodeLimit, "query", "too \"long\"")),
			`{"error":{"code":"limit","message":"too \"long\"","field":"query"}}`},
		{errors.New("out of <memory>"), `{"error":{"code":"internal","message":"out of \u003cmemory\u003e","field":""}}`},
		{nil, `{"error":{"code":"internal","message":"unknown error","field":""}}`},
		{(*Error)(nil), `{"error":{"code":"internal","message":"unknown error","field":""}}`},
	}
	for _, tc := range tests {
		if got := string(AppendError(nil, tc.err)); got != tc.want {
			t.Errorf("AppendError(%v) =\n%s\nwant\n%s", tc.err, got, tc.want)
		}
	}
}

// Every decoder error renders as the error JSON with its code and field.
func TestAppendErrorFromDecoder(t *testing.T) {
	_, err := decode.ParseRequest([]byte(`{"query":"q","chunks":[{"scores":{"bm25":-1}}]}`), nil, false)
	want := `{"error":{"code":"bad_field","message":"must be \u003e= 0","field":"chunks[0].scores.bm25"}}`
	if got := string(AppendError(nil, err)); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
