package server

import "testing"

// The header names come from gate/chat; this pins what goes on the wire, so
// a change there cannot rename a header clients read without a test failing.
func TestHeaderNamesOnTheWire(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{HeaderAction, "X-Ctxgate-Action"},
		{HeaderLevel, "X-Ctxgate-Level"},
		{HeaderConfidence, "X-Ctxgate-Confidence"},
		{HeaderPolicy, "X-Ctxgate-Policy"},
		{HeaderRefusal, "X-Ctxgate-Refusal"},
		{HeaderError, "X-Ctxgate-Error"},
		{HeaderDecisionID, "X-Ctxgate-Decision-Id"},
		{HeaderAnswerCheck, "X-Ctxgate-Answer-Check"},
		{HeaderSoftRefusal, "X-Ctxgate-Soft-Refusal"},
		{HeaderUnknownCite, "X-Ctxgate-Unknown-Citations"},
		{HeaderUncited, "X-Ctxgate-Uncited-Sentences"},
	} {
		if c.got != c.want {
			t.Errorf("header %q, want %q", c.got, c.want)
		}
	}
}
