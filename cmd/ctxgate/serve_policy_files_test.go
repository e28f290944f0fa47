package main

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
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

// serveMustNotStart runs `ctxgate serve args...` as a process and returns
// its exit code and stderr; it fails the test if the server starts
// listening.
func serveMustNotStart(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	var stdout, stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case <-done:
			return cmd.ProcessState.ExitCode(), stderr.String()
		case <-deadline:
		case <-time.After(20 * time.Millisecond):
			if !strings.Contains(stdout.String(), "listening") {
				continue
			}
		}
		cmd.Process.Kill()
		<-done
		t.Fatalf("serve %v started: %s", args, tail(stderr.String(), 2000))
	}
}

// replaceFile puts src's bytes at dst by rename, as a deployment does.
func replaceFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst+".tmp", b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dst+".tmp", dst); err != nil {
		t.Fatal(err)
	}
}

// TestServeRestartRefusesRollback (issue 24, item 2): with --trust, the
// highest signed version a real `ctxgate serve` loaded survives a kill -9:
// restarted on an older signed bundle it refuses to start, whatever
// --min-version says below it; --min-version above it still counts; an
// operator rolls back by removing the state file; --state-dir places it.
func TestServeRestartRefusesRollback(t *testing.T) {
	dir := t.TempDir()
	trust, bundle := signedVersions(t, dir, "1", "2", "3")
	policy := filepath.Join(dir, "policy.bundle.json")
	state := policy + ".ctxgate-state.json"
	flags := append(wasmFlags(t, "tinygo"), "--policy", policy, "--trust", trust)
	replaceFile(t, bundle("2"), policy)
	c := startChild(t, nil, append(flags, "--reload-poll", "50ms")...)
	replaceFile(t, bundle("3"), policy)
	deadline := time.Now().Add(20 * time.Second)
	for policyOf(t, c.base) != "default@3" {
		if time.Now().After(deadline) {
			t.Fatalf("v3 not loaded: %s", tail(c.stderr.String(), 2000))
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.cmd.Process.Kill() // a crash, not a shutdown: nothing is written on the way out
	<-c.exited

	for _, v := range []string{"1", "2"} {
		replaceFile(t, bundle(v), policy)
		for _, extra := range [][]string{nil, {"--min-version", "1"}} {
			code, errs := serveMustNotStart(t, append(flags, extra...)...)
			if code == exitOK || !strings.Contains(errs, "older than 3, the highest signed version loaded") || !strings.Contains(errs, "remove "+strconv.Quote(state)) {
				t.Errorf("restart on v%s %v: exit %d: %s", v, extra, code, tail(errs, 1000))
			}
		}
	}
	replaceFile(t, bundle("3"), policy)
	if code, errs := serveMustNotStart(t, append(flags, "--min-version", "4")...); !strings.Contains(errs, "older than min_version 4") {
		t.Errorf("--min-version above the state: exit %d: %s", code, tail(errs, 1000))
	}

	// The deliberate rollback: the state file removed, v2 starts, and is
	// the new floor.
	replaceFile(t, bundle("2"), policy)
	if err := os.Remove(state); err != nil {
		t.Fatal(err)
	}
	c = startChild(t, nil, flags...)
	if got := policyOf(t, c.base); got != "default@2" {
		t.Fatalf("after removing the state: %q", got)
	}
	var rec struct {
		Version    string `json:"version"`
		PolicyPath string `json:"policy_path"`
	}
	if b, err := os.ReadFile(state); err != nil || json.Unmarshal(b, &rec) != nil || rec.Version != "2" || rec.PolicyPath != policy {
		t.Errorf("state after the rollback: %+v %v", rec, err)
	}

	// --state-dir: the state goes there, and nothing beside the policy.
	os.Remove(state)
	stateDir := t.TempDir()
	replaceFile(t, bundle("3"), policy)
	c2 := startChild(t, nil, append(flags, "--state-dir", stateDir)...)
	policyOf(t, c2.base)
	if _, err := os.Stat(filepath.Join(stateDir, filepath.Base(state))); err != nil {
		t.Errorf("--state-dir: %v", err)
	}
	if _, err := os.Stat(state); err == nil {
		t.Errorf("--state-dir: a state file beside the policy too")
	}
}
