package main

import (
	"context"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/host"
)

func TestValidate(t *testing.T) {
	const answer = `{"answer":"Generate a new key pair and publish it first [S1]. It rotates every ninety days [S3].","tags":["S1","S2"]}`
	n, err := host.NewNative(nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := n.Validate(context.Background(), []byte(answer))
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			f := modeFlags(t, mode)
			code, out, errs := cli(t, answer, append([]string{"validate"}, f...)...)
			// S3 was never offered: validate fails (exit 3) by default.
			if code != exitVerdict || out != string(want)+"\n" {
				t.Fatalf("validate: exit %d, stdout %s, stderr %s; want %s", code, out, errs, want)
			}
			code, out, errs = cli(t, `{"answer":7}`, append([]string{"validate"}, f...)...)
			if code != exitFail || out != "" || !oneLine(errs) || !strings.Contains(errs, "answer") {
				t.Fatalf("bad answer: exit %d, stdout %q, stderr %q", code, out, errs)
			}
		})
	}
}
