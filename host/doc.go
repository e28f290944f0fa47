// Package host runs the ctxgate guest module from Go: it compiles the module
// once, keeps a pool of instances safe for concurrent use, and calls the
// guest's exports with a per-call deadline and a memory cap. Bad input comes
// back as a *GateError naming the field; a trap or timeout poisons only the
// instance it happened in, which the pool replaces.
//
// NewNative runs the same core without Wasm, behind the same Evaluator
// interface, for the CLI's --native flag and for parity tests.
package host
