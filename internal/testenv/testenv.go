// Package testenv adapts tests to where they run.
//
// Missing ends a test whose inputs are absent (built modules, golden files,
// a toolchain): it skips on a developer machine and fails under CI=true,
// where a test that silently skips would be a false green.
//
// Importing the package also puts a test binary built by TinyGo in its
// package's directory. `tinygo test` on wasip1 (scripts/test-tinygo.sh)
// runs the tests over wazero with the repository mounted at "/" and "/" as
// the working directory, so relative paths ("../testdata",
// "testdata/vector") would not resolve; under TinyGo this package changes
// to the directory named by CTXGATE_TEST_DIR (the script sets it). Under
// the Go toolchain, which runs tests in the package's directory already, it
// does nothing. A test package that reads files imports it for that.
package testenv

import (
	"os"
	"testing"
)

// DirEnv names the variable that holds the package's directory inside the
// guest, e.g. "/gate".
const DirEnv = "CTXGATE_TEST_DIR"

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
