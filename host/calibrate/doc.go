// Package calibrate fits a policy's answerability models to a
// deployment's own labeled examples and chooses the threshold with a
// stated, finite-sample bound (ctxgate calibrate, docs/calibration.md).
// It runs on the host only: the gate evaluates the calibrated policy like
// any other and never fits anything.
//
// The examples are split by group (Example.Group) into a fit split and a
// calibration split (and optionally a test split, only reported on):
//
//   - On the fit split, each of the base policy's two models (text and
//     scored, signals.answerability) is refitted on the examples it
//     decides: the base model's log-odds scaled, raw score levels of the
//     deployment's retriever added (top_vector, top_sparse, top_bm25,
//     with saturations at the median best score), or every weight anew,
//     chosen by grouped cross-validation and only as far as the examples
//     afford (fitModel). A model without enough examples keeps the base's
//     weights; when none can be fitted, the fit split calibrates too.
//   - On the calibration split, Learn-then-Test picks the threshold on the
//     fitted log-odds with an exact binomial test (learnThenTest): with
//     probability at least Confidence over the calibration sample, the
//     target rate (hallucination: answered among examples labeled 0;
//     error: withheld among examples labeled 1) is at most Alpha on new
//     data from the same source. Both models' biases then move so that
//     the threshold lands on the base's lowest answering band.
//
// The written policy is the base with new answerability weights, biases
// and saturations (and name, version, description): it validates in the
// gate, runs unchanged in every host, and can be signed. Before it is
// returned, every example is decided with it through the gate, and the
// calibration split's answers must be exactly those the test counted.
//
// The guarantee needs the calibration examples to be exchangeable with
// future traffic (same retriever, corpus, question mix and labeling), and
// examples that are not independent (one question asked twice) to share a
// group. When the examples cannot give the bound, Calibrate returns an
// error wrapping ErrNoGuarantee and no policy.
package calibrate
