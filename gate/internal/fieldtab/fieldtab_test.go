package fieldtab

import (
	"reflect"
	"strings"
	"testing"
)

// Every tagged field of the schema is a member, in declaration order, with
// the ignored members after their object's fields; tagless fields and "-"
// are not members.
func TestFields(t *testing.T) {
	fs, err := Fields(Schema())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range fs {
		names = append(names, f.Object+"."+f.Name)
	}
	got := strings.Join(names, " ")
	for _, want := range []string{"request.query request.chunks", "chunk.temperature chunk.metadata score.vector", "score.sparse"} {
		if !strings.Contains(got, want) {
			t.Errorf("members %q lack %q", got, want)
		}
	}
	if strings.Contains(got, "has_") || strings.Contains(got, "now_sec") || strings.Contains(got, "-") {
		t.Errorf("a field that is not a member: %q", got)
	}
}

func TestGenerateRejects(t *testing.T) {
	type quoted struct {
		X string `json:"a\"b"`
	}
	type long struct {
		X string `json:"abcdefghijklmnopqrstuvwxy"`
	}
	type clash struct {
		X string `json:"x"`
	}
	for _, objs := range [][]Object{
		{{Name: "q", Type: reflect.TypeOf(quoted{})}},
		{{Name: "l", Type: reflect.TypeOf(long{})}},
		{{Name: "a", Type: reflect.TypeOf(clash{})}, {Name: "b", Type: reflect.TypeOf(clash{})}},
	} {
		if _, err := Generate("p", objs); err == nil {
			t.Errorf("%v: generated", objs[0].Type)
		}
	}
}
