// Package candidates is the prototype harness the default policy's
// answerability features were chosen with (version 4): many more candidate
// query-level signals than the core carries, computed in plain Go straight
// from the labeled requests (a simpler tokenizer than the core's), and
// measured on the tune halves only, alone and in cross-validated logistic
// combinations. What it showed, and what did not help, is in
// ../../PROPOSAL.md. The features the core adopted are measured again
// through the core itself in ../answerability_test.go.
//
// Position in a request is never a feature: the sets carry no label
// information in it (NoMIRACL shuffles its passages).
//
//	CTXGATE_EVAL_LONG=1 go test ./bench/eval/experimental/candidates -v
package candidates
