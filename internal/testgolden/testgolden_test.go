package testgolden

import (
	"os"
	"path/filepath"
	"testing"
)

func TestLoad(t *testing.T) {
	root := t.TempDir()
	write := func(p, s string) {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("requests/b/one.json", "rb1")
	write("requests/a/two.json", "ra2")
	write("requests/a/one.json", "ra1")
	write("decisions/a/one.json", "da1")
	write("requests/a/notes.txt", "not a case")
	cases, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cases {
		got = append(got, c.Policy+"/"+c.Name+":"+string(c.Request)+":"+string(c.Decision))
	}
	want := []string{"a/one:ra1:da1", "a/two:ra2:", "b/one:rb1:"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	if cases[1].Decision != nil || cases[1].DecisionPath != filepath.Join(root, "decisions", "a", "two.json") {
		t.Fatalf("missing decision: %+v", cases[1])
	}
	if p := Policies(cases); len(p) != 2 || p[0] != "a" || p[1] != "b" {
		t.Fatalf("Policies = %v", p)
	}
	if of := Of(cases, "b"); len(of) != 1 || of[0].Name != "one" {
		t.Fatalf("Of(b) = %+v", of)
	}
}
