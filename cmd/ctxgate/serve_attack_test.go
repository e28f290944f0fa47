package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// runMainEnv makes the test binary run the CLI (TestMain), so a test can
// start `ctxgate serve` as a process of its own: its stalls (a guest call
// that pins a thread, a garbage collection that waits for it) are then the
// server's alone, not the clients measuring it.
const runMainEnv = "CTXGATE_TEST_RUN_MAIN"

// serveProcess starts `ctxgate serve args...` as a child process on an
// ephemeral port and returns its base URL; it is stopped (SIGTERM) when the
// test ends.
func serveProcess(t *testing.T, args ...string) (string, *lockedBuffer) {
	t.Helper()
	c := startChild(t, nil, args...)
	return c.base, c.stderr
}

// serveChild is `ctxgate serve` running as a process of its own.
type serveChild struct {
	base   string // http://127.0.0.1:PORT
	stderr *lockedBuffer
	cmd    *exec.Cmd
	exited chan struct{} // closed when the process has ended
}

// startChild starts `ctxgate serve args...` with env added to the
// environment and waits until it listens; it is stopped (SIGTERM) when the
// test ends.
func startChild(t *testing.T, env []string, args ...string) *serveChild {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(append(os.Environ(), runMainEnv+"=1"), env...)
	return startServeChild(t, cmd)
}

// startServeCommand starts cmd, a `ctxgate serve` that listens on an
// ephemeral port, and returns its base URL and its stderr.
func startServeCommand(t *testing.T, cmd *exec.Cmd) (string, *lockedBuffer) {
	t.Helper()
	c := startServeChild(t, cmd)
	return c.base, c.stderr
}

// startServeChild starts cmd, a `ctxgate serve` that listens on an
// ephemeral port, and waits until it listens; it is stopped (SIGTERM) when
// the test ends.
func startServeChild(t *testing.T, cmd *exec.Cmd) *serveChild {
	t.Helper()
	c := &serveChild{stderr: &lockedBuffer{}, cmd: cmd, exited: make(chan struct{})}
	cmd.Stderr = c.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { cmd.Wait(); close(c.exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-c.exited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-c.exited
		}
	})
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if _, u, ok := strings.Cut(lines.Text(), "listening on "); ok {
			go io.Copy(io.Discard, out)
			c.base = strings.TrimSpace(u)
			return c
		}
	}
	t.Fatalf("serve did not start: %s", c.stderr.String())
	return nil
}

// attackRequest is issue 15's attack: one chunk whose metadata object has
// keys distinct keys, plus texts chunks of 64 KiB of text (the per-chunk
// limit). Its cost in the TinyGo module grows with the square of keys, and
// with the calls an instance has already made.
func attackRequest(keys, texts int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"query":"how do I reset my password","chunks":[{"id":"m","text":"reset the password in settings","scores":{"vector":0.8},"metadata":{`)
	for i := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k`)
		b.WriteString(strconv.Itoa(1000000 + i)[1:])
		b.WriteString(`":1`)
	}
	b.WriteString(`}}`)
	text := strings.Repeat("password reset settings account ", 2048)[:64<<10-1]
	for i := range texts {
		b.WriteString(`,{"id":"t` + strconv.Itoa(i) + `","text":"` + text + `","scores":{"vector":0.5}}`)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// latencies is a concurrent list of durations.
type latencies struct {
	mu  sync.Mutex
	d   []time.Duration
	bad map[string]int // failures by status or error
}

func (l *latencies) add(d time.Duration, failure string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.d = append(l.d, d)
	if failure != "" {
		if l.bad == nil {
			l.bad = map[string]int{}
		}
		l.bad[failure]++
	}
}

// quantile of the sorted durations (q in [0, 1]).
func (l *latencies) quantile(q float64) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), l.d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

func (l *latencies) summary() string {
	l.mu.Lock()
	n, bad := len(l.d), l.bad
	l.mu.Unlock()
	return strconv.Itoa(n) + " requests, p50 " + l.quantile(0.5).Round(100*time.Microsecond).String() +
		", p99 " + l.quantile(0.99).Round(100*time.Microsecond).String() + ", max " + l.quantile(1).Round(100*time.Microsecond).String() +
		", failures " + failures(bad)
}

func failures(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for k, v := range m {
		parts = append(parts, k+" x"+strconv.Itoa(v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// TestServeUnderAttack is issue 15's acceptance test: with default settings,
// two clients sending the worst input found leave /healthz and a third
// client's p99 under 100 ms. It runs `ctxgate serve` as a process of its
// own with nothing but a port and the module chosen, two attackers posting
// attackRequest back to back, a third client posting an ordinary request
// every 10 ms, and a probe getting /healthz every 20 ms, for
// CTXGATE_ATTACK_SECONDS (default 5; the figure is for 60), with
// CTXGATE_ATTACK_SERVE_FLAGS added to serve's flags when set.
//
// It fails when a third-client request or a probe fails, or when either p99
// passes the gate deadline (1 s): the guarantee is that one slow request
// never delays others beyond the deadline. The 100 ms target is reported in
// the log and enforced only with CTXGATE_ATTACK_STRICT=1: a timed assertion
// that tight is at the mercy of a shared machine.
//
// Two attacks, each against a fresh server: the (200,000 keys and
// 14 chunks of 64 KiB, 3.3 MB: under max_request_bytes, so all of it
// reaches the guest, in the large-request lane), and the same attack cut to
// just under large_body_bytes (21,000 keys, 252 KB), the worst that still
// runs in the fast pool without termination checks.
func TestServeUnderAttack(t *testing.T) {
	if testing.Short() {
		t.Skip("runs ctxgate serve under load for seconds")
	}
	for _, c := range []struct {
		name        string
		keys, texts int
	}{{"metadata attack", 200000, 14}, {"just under large_body_bytes", 21000, 0}} {
		t.Run(c.name, func(t *testing.T) { underAttack(t, attackRequest(c.keys, c.texts)) })
	}
}

func underAttack(t *testing.T, attack []byte) {
	seconds := 5
	if v, err := strconv.Atoi(os.Getenv("CTXGATE_ATTACK_SECONDS")); err == nil && v > 0 {
		seconds = v
	}
	args := append([]string{"--reload-poll", "0"}, wasmFlags(t, "tinygo")...)
	// Other settings to compare (the test's claim is about the defaults).
	args = append(args, strings.Fields(os.Getenv("CTXGATE_ATTACK_SERVE_FLAGS"))...)
	base, stderr := serveProcess(t, args...)
	normal, err := os.ReadFile(filepath.Join("..", "..", "testdata", "requests", "default", "inject.json"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(seconds)*time.Second)
	defer cancel()
	send := func(ctx context.Context, c *http.Client, method, url string, body []byte) (time.Duration, string) {
		var r io.Reader
		if body != nil {
			r = bytes.NewReader(body)
		}
		req, _ := http.NewRequestWithContext(ctx, method, url, r)
		start := time.Now()
		resp, err := c.Do(req)
		if err != nil {
			return time.Since(start), "error"
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		d := time.Since(start)
		if resp.StatusCode != 200 {
			return d, strconv.Itoa(resp.StatusCode)
		}
		return d, ""
	}
	client := func() *http.Client {
		return &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	}
	var attacks, third, health latencies
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := client()
			for ctx.Err() == nil {
				// Cancelled at the end of the window: the attack stops then.
				d, bad := send(ctx, c, http.MethodPost, base+"/v1/gate", attack)
				if ctx.Err() == nil {
					attacks.add(d, bad)
				}
			}
		}()
	}
	loop := func(l *latencies, every time.Duration, method, path string, body []byte) {
		defer wg.Done()
		c := client()
		time.Sleep(300 * time.Millisecond) // the attack is under way
		for ctx.Err() == nil {
			// Every request started in the window counts, however late it
			// ends (bounded by the client's 60 s timeout).
			d, bad := send(context.Background(), c, method, base+path, body)
			l.add(d, bad)
			time.Sleep(every)
		}
	}
	wg.Add(2)
	go loop(&third, 10*time.Millisecond, http.MethodPost, "/v1/gate", normal)
	go loop(&health, 20*time.Millisecond, http.MethodGet, "/healthz", nil)
	wg.Wait()

	t.Logf("attack body %d bytes, %d s", len(attack), seconds)
	t.Logf("attackers (finished in the window): %s", attacks.summary())
	t.Logf("third client: %s", third.summary())
	t.Logf("/healthz:     %s", health.summary())
	if len(third.bad) > 0 || len(health.bad) > 0 || len(third.d) == 0 || len(health.d) == 0 {
		t.Errorf("the attack denied service: third client failures %s, /healthz failures %s\n%s",
			failures(third.bad), failures(health.bad), tail(stderr.String(), 2000))
	}
	limit := time.Second // the gate deadline
	if os.Getenv("CTXGATE_ATTACK_STRICT") == "1" {
		limit = 100 * time.Millisecond
	}
	for _, c := range []struct {
		name string
		l    *latencies
	}{{"third client", &third}, {"/healthz", &health}} {
		if p99 := c.l.quantile(0.99); p99 > limit {
			t.Errorf("%s p99 %v under attack, over %v", c.name, p99, limit)
		}
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
