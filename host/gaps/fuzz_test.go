package gaps

import (
	"bytes"
	"testing"
)

// Arbitrary input never panics the reader or the pipeline, and a file that
// reads builds a report that writes, in every format.
func FuzzReadAndBuild(f *testing.F) {
	f.Add([]byte(goodLine + "\n" + `{"kind":"thumbs_down","query":"q","query_embedding":[1,0]}`))
	f.Add([]byte(`{"gap_event":{"kind":"refusal_soft","query":"x","signals":{"coverage":1e308}}}`))
	f.Add([]byte("\xef\xbb\xbf\n\n{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		evs, _, _ := ReadEvents(bytes.NewReader(data), ReadOptions{MaxLineBytes: 1 << 16})
		rep, err := Build(evs, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := WriteJSON(&b, rep); err != nil {
			t.Fatal(err)
		}
		if err := WriteMarkdown(&b, rep); err != nil {
			t.Fatal(err)
		}
		if err := WriteHTML(&b, rep, evs, HTMLOptions{}); err != nil {
			t.Fatal(err)
		}
	})
}
