// Package testenv adapts tests to where they run.
//
// Missing ends a test whose inputs are absent (built modules, golden files,
// a toolchain): it skips on a developer machine and fails under CI=true,
// where a test that silently skips would be a false green.
package testenv

import (
	"os"
	"testing"
)

// InCI reports whether the tests run in CI (CI=true, as .ci/run sets).
func InCI() bool { return os.Getenv("CI") == "true" }

// Missing skips t with the message, or fails it under CI=true.
func Missing(t testing.TB, msg string) {
	t.Helper()
	if InCI() {
		t.Fatal(msg + " (CI=true: a skip here would hide that the test ran on nothing)")
	}
	t.Skip(msg)
}
