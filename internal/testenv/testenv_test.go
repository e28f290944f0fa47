package testenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Missing skips outside CI and fails under CI=true. Each case runs this
// test binary again with TESTENV_CHILD set, so the child's skip or failure
// is observed from outside.
func TestMissing(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") == "1" {
		Missing(t, "no golden files")
		t.Fatal("Missing returned")
	}
	for _, tc := range []struct {
		ci       string
		wantFail bool
		want     string
	}{
		{"", false, "--- SKIP: TestMissing"},
		{"false", false, "--- SKIP: TestMissing"},
		{"true", true, "--- FAIL: TestMissing"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMissing$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTENV_CHILD=1", "CI="+tc.ci)
		out, err := cmd.CombinedOutput()
		if (err != nil) != tc.wantFail || !strings.Contains(string(out), tc.want) || !strings.Contains(string(out), "no golden files") {
			t.Errorf("CI=%q: exit %v, output:\n%s", tc.ci, err, out)
		}
	}
}
