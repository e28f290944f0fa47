package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxgate/ctxgate/internal/hostile"
	"github.com/ctxgate/ctxgate/internal/safefile"
	"github.com/ctxgate/ctxgate/policies"
)

// signedVersions signs the default preset at each version with one hybrid
// key into dir/vN.bundle.json; it returns the trust file and the path of a
// version's bundle.
func signedVersions(t *testing.T, dir string, versions ...string) (trust string, bundle func(v string) string) {
	t.Helper()
	if code, _, errs := ctl(t, "keygen", "--out", filepath.Join(dir, "k")); code != exitOK {
		t.Fatalf("keygen: %s", errs)
	}
	bundle = func(v string) string { return filepath.Join(dir, "v"+v+".bundle.json") }
	for _, v := range versions {
		var p map[string]any
		def, _ := policies.Get("default")
		json.Unmarshal(def, &p)
		p["version"] = v
		plain := filepath.Join(dir, "v"+v+".json")
		b, _ := json.Marshal(p)
		os.WriteFile(plain, b, 0o644)
		code, out, errs := ctl(t, "sign", "--key", filepath.Join(dir, "k.key"), plain)
		if code != exitOK {
			t.Fatalf("sign: %s", errs)
		}
		os.WriteFile(bundle(v), []byte(out), 0o644)
	}
	return filepath.Join(dir, "k.pub"), bundle
}

// relinkPath points the symlink link at target atomically, as a deployment
// swapping a "current" link does.
func relinkPath(t *testing.T, target, link string) {
	t.Helper()
	os.Remove(link + ".new")
	if err := os.Symlink(target, link+".new"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(link+".new", link); err != nil {
		t.Fatal(err)
	}
}

// metricSum is the sum of a /metrics page's samples of name (every label
// set), or -1 when there is none.
func metricSum(page, name string) float64 {
	sum := -1.0
	for _, line := range strings.Split(page, "\n") {
		rest, ok := strings.CutPrefix(line, name)
		if !ok || (rest[0] != ' ' && rest[0] != '{') {
			continue
		}
		v, err := strconv.ParseFloat(rest[strings.LastIndexByte(rest, ' ')+1:], 64)
		if err == nil {
			sum = max(sum, 0) + v
		}
	}
	return sum
}

// peakRSS is a process's peak resident memory (VmHWM), in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Skip("no /proc: ", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/pid/status")
	return 0
}

// policyOf is the policy label a gate decision was made with.
func policyOf(t *testing.T, base string) string {
	t.Helper()
	r := send(t, http.MethodPost, base+"/v1/gate", []byte(goodRequest))
	if r.status != 200 {
		t.Fatalf("/v1/gate: %d %s", r.status, r.body)
	}
	return r.header.Get("X-Ctxgate-Policy")
}

// TestServeHostilePolicyFiles (issue 24, item 2): under --trust, the policy
// path turned into a symlink to /dev/zero, a FIFO with no writer, a sparse
// 2 GiB file (and the other hostile files) leaves a real `ctxgate serve`
// up, deciding with the policy it had, under 300 MB of peak memory; each is
// refused by the polling reloader with a log line and the metric, and a
// signed bundle put back afterwards loads. The process runs under a 3 GiB
// address-space cap, so a reader without a bound fails here (fatal: out of
// memory) rather than taking the machine's memory.
func TestServeHostilePolicyFiles(t *testing.T) {
	dir := t.TempDir()
	files, err := hostile.Files(t.TempDir(), safefile.MaxPolicyBytes)
	if err != nil {
		t.Fatal(err)
	}
	// Version i is put back after the i-th hostile file: a poller that
	// sees the swap back loads it, so the next file starts from a known
	// state, and v(len+1) is the signed bundle written after all of them.
	var versions []string
	for i := range len(files) + 1 {
		versions = append(versions, strconv.Itoa(i+1))
	}
	trust, bundle := signedVersions(t, dir, versions...)
	policy := filepath.Join(dir, "policy.bundle.json")
	relinkPath(t, bundle("1"), policy)
	c := startChild(t, []string{maxAddressSpaceEnv + "=" + strconv.Itoa(3<<30)},
		append(wasmFlags(t, "tinygo"), "--policy", policy, "--trust", trust, "--reload-poll", "50ms")...)
	waitPolicy := func(what, want string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for policyOf(t, c.base) != want {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not deciding with %s: %s", what, want, tail(c.stderr.String(), 2000))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitPolicy("start", "default@1")
	for i, f := range files {
		relinkPath(t, f.Path, policy)
		deadline := time.Now().Add(20 * time.Second)
		for metricSum(string(send(t, http.MethodGet, c.base+"/metrics", nil).body), "ctxgate_policy_file_refused_total") < float64(i+1) {
			select {
			case <-c.exited:
				t.Fatalf("%s: serve exited: %s", f.Name, tail(c.stderr.String(), 2000))
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the reloader did not refuse it within 20 s: %s", f.Name, tail(c.stderr.String(), 2000))
			}
			time.Sleep(20 * time.Millisecond)
		}
		if got, want := policyOf(t, c.base), "default@"+versions[i]; got != want {
			t.Fatalf("%s: deciding with %q, want %q", f.Name, got, want)
		}
		relinkPath(t, bundle(versions[i+1]), policy)
		waitPolicy(f.Name+", then a signed bundle", "default@"+versions[i+1])
	}
	rss := peakRSS(t, c.cmd.Process.Pid)
	t.Logf("peak RSS after %d hostile policy files: %.1f MB", len(files), float64(rss)/1e6)
	if rss > 300e6 {
		t.Errorf("peak RSS %d bytes, want under 300 MB", rss)
	}
	for _, want := range []string{"named pipe (FIFO), not a regular file", "is a character device", "is larger than 4194304 bytes", "keeping the current policy"} {
		if !strings.Contains(c.stderr.String(), want) {
			t.Errorf("serve's log does not say %q:\n%s", want, tail(c.stderr.String(), 3000))
		}
	}
}

// TestCLIRefusesHostilePolicyFiles: every command that reads a policy, a
// bundle, a trust file or a key file refuses the hostile files at once,
// naming what each is, instead of blocking on a FIFO or reading /dev/zero.
func TestCLIRefusesHostilePolicyFiles(t *testing.T) {
	dir := t.TempDir()
	trust, bundle := signedVersions(t, dir, "1")
	files, err := hostile.Files(t.TempDir(), safefile.MaxPolicyBytes)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		want := "not a regular file"
		if f.TooLarge {
			want = "is larger than 4194304 bytes"
		}
		for _, args := range [][]string{
			{"eval", "--native", "--policy", f.Path},
			{"eval", "--native", "--policy", bundle("1"), "--trust", f.Path},
			{"sign", "--key", f.Path, filepath.Join(dir, "v1.json")},
			{"sign", "--key", filepath.Join(dir, "k.key"), f.Path},
			{"verify", "--trust", trust, f.Path},
			{"verify", "--trust", f.Path, bundle("1")},
		} {
			type result struct {
				code int
				errs string
			}
			done := make(chan result, 1)
			go func() {
				code, _, errs := cli(t, goodRequest, args...)
				done <- result{code, errs}
			}()
			select {
			case r := <-done:
				if r.code == exitOK || !strings.Contains(r.errs, want) {
					t.Errorf("%s: %v: exit %d, stderr %q; want %q", f.Name, args, r.code, r.errs, want)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("%s: %v blocked", f.Name, args)
			}
		}
	}
}
