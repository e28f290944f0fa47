// Command load drives POST /v1/gate with concurrent clients on 127.0.0.1 for
// a bounded time and reports throughput, latency percentiles and errors. It
// is a benchmark, not a test: numbers depend on the machine and on what else
// runs on it, so nothing here asserts a speed.
//
// Requests are real: TREC DL19 queries with their BM25 + ada-002 hybrid
// top-k passages and scores (from ../shared/data, or $CTXGATE_DATA), or the
// golden requests in testdata/requests when the data is absent.
//
//	go run ./bench/load                       # in-process server, 10 s, 8 clients
//	go run ./bench/load -url http://127.0.0.1:8080 -clients 16 -duration 30s
//
// Without -url it starts the server in this process on 127.0.0.1:0 (the
// real HTTP stack, the real Wasm module); the clients share the machine's
// cores with it, as they would on one host.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ctxgate/ctxgate/bench/eval"
	"github.com/ctxgate/ctxgate/host"
	"github.com/ctxgate/ctxgate/host/server"
	"github.com/ctxgate/ctxgate/policies"
)

func main() {
	url := flag.String("url", "", "base URL of a running ctxgate serve; empty: start one in this process")
	clients := flag.Int("clients", 8, "concurrent clients (each one request at a time, keep-alive)")
	duration := flag.Duration("duration", 10*time.Second, "how long to drive load (after warm-up)")
	warmup := flag.Duration("warmup", time.Second, "load before measuring (compiles, fills the pool)")
	k := flag.Int("k", 10, "passages per DL19 request (top k of the hybrid list)")
	policy := flag.String("policy", "", "in-process server: policy file or preset name")
	module := flag.String("module", "tinygo", "in-process server: tinygo or go")
	wasm := flag.String("wasm", "", "in-process server: run this module `FILE` instead of an embedded one")
	native := flag.Bool("native", false, "in-process server: run the core natively (for comparison)")
	pool := flag.Int("pool-size", 0, "in-process server: Wasm instances (0: GOMAXPROCS)")
	asJSON := flag.Bool("json", false, "print the result as JSON")
	direct := flag.Bool("direct", false, "call the gate (host.Gate.Evaluate) directly, without HTTP: the server's own share is the difference")
	flag.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of this process (clients and in-process server) to `FILE`, over the measured run only (not start-up, compilation or warm-up)")
	flag.Parse()
	if err := run(*url, *clients, *duration, *warmup, *k, *policy, *module, *wasm, *native, *pool, *asJSON, *direct); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

func run(url string, clients int, duration, warmup time.Duration, k int, policy, module, wasm string, native bool, pool int, asJSON, direct bool) error {
	if clients < 1 || duration <= 0 || duration > 10*time.Minute {
		return errors.New("want -clients >= 1 and 0 < -duration <= 10m")
	}
	reqs, source, err := loadRequests(k)
	if err != nil {
		return err
	}
	if direct {
		return runDirect(reqs, source, clients, duration, warmup, policy, module, wasm, native, pool, asJSON)
	}
	target := url
	if target == "" {
		srv, addr, err := startServer(policy, module, wasm, native, pool)
		if err != nil {
			return err
		}
		defer srv.Shutdown(context.Background())
		target = "http://" + addr
	}
	if !strings.HasPrefix(target, "http://127.") && !strings.HasPrefix(target, "http://localhost") && !strings.HasPrefix(target, "http://[::1]") {
		return errors.New("the load generator only targets this machine (127.0.0.0/8, localhost, [::1]), got " + target)
	}
	tr := &http.Transport{MaxIdleConns: clients, MaxIdleConnsPerHost: clients, DisableCompression: true}
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	endpoint := strings.TrimSuffix(target, "/") + "/v1/gate"

	if warmup > 0 {
		drive(client, endpoint, reqs, clients, warmup)
	}
	res, err := measured(func() *result { return drive(client, endpoint, reqs, clients, duration) })
	if err != nil {
		return err
	}
	res.Source, res.Clients, res.Target, res.GOMAXPROCS = source, clients, target, runtime.GOMAXPROCS(0)
	if url == "" {
		res.Server = "in-process, module " + module
		if wasm != "" {
			res.Server = "in-process, module " + wasm
		}
		if native {
			res.Server = "in-process, native"
		}
	}
	res.write(os.Stdout, asJSON)
	return nil
}

// result is one run's figures.
type result struct {
	Target     string  `json:"target"`
	Server     string  `json:"server,omitempty"`
	Source     string  `json:"requests"`
	Clients    int     `json:"clients"`
	GOMAXPROCS int     `json:"gomaxprocs"`
	Seconds    float64 `json:"seconds"`
	Requests   int     `json:"requests_done"`
	Errors     int     `json:"errors"`
	Throughput float64 `json:"decisions_per_second"`
	// CPUSeconds is this process's CPU time over the run (clients and an
	// in-process server together); CPUPerDecisionUS divides it by the
	// decisions made.
	CPUSeconds       float64        `json:"cpu_seconds"`
	CPUPerDecisionUS float64        `json:"cpu_us_per_decision"`
	P50, P90         float64        `json:"-"`
	P99, Max         float64        `json:"-"`
	LatencyMS        map[string]any `json:"latency_ms"`
	Actions          map[string]int `json:"actions"`
	FirstError       string         `json:"first_error,omitempty"`
}

// write reports r as JSON (for make bench) or as text.
func (r *result) write(w io.Writer, asJSON bool) {
	if asJSON {
		b, _ := json.MarshalIndent(r, "", "  ")
		fmt.Fprintln(w, string(b))
		return
	}
	r.print(w)
}

func (r *result) print(w io.Writer) {
	fmt.Fprintf(w, "target      %s (%s)\n", r.Target, r.Server)
	fmt.Fprintf(w, "requests    %s\n", r.Source)
	fmt.Fprintf(w, "clients     %d on GOMAXPROCS=%d, %.1f s\n", r.Clients, r.GOMAXPROCS, r.Seconds)
	fmt.Fprintf(w, "decisions   %d (%.0f/s), errors %d\n", r.Requests, r.Throughput, r.Errors)
	fmt.Fprintf(w, "cpu         %.2f s, %.0f µs per decision (this process: clients and in-process server)\n", r.CPUSeconds, r.CPUPerDecisionUS)
	fmt.Fprintf(w, "latency     p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, max %.3f ms\n", r.P50, r.P90, r.P99, r.Max)
	names := make([]string, 0, len(r.Actions))
	for a := range r.Actions {
		names = append(names, a)
	}
	sort.Strings(names)
	var parts []string
	for _, a := range names {
		parts = append(parts, fmt.Sprintf("%s %d", a, r.Actions[a]))
	}
	fmt.Fprintf(w, "actions     %s\n", strings.Join(parts, ", "))
	if r.FirstError != "" {
		fmt.Fprintf(w, "first error %s\n", r.FirstError)
	}
}

// drive runs clients goroutines for d, each cycling through reqs from its
// own offset, and merges their latencies.
func drive(client *http.Client, endpoint string, reqs [][]byte, clients int, d time.Duration) *result {
	return driveWith(func(body []byte) (string, error) {
		resp, err := client.Post(endpoint, "application/json", bytes.NewReader(body))
		if err != nil {
			return "", err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err == nil && resp.StatusCode != 200 {
			err = errors.New(resp.Status)
		}
		return resp.Header.Get(server.HeaderAction), err
	}, reqs, clients, d)
}

// driveWith runs clients goroutines calling call for d.
func driveWith(call func([]byte) (string, error), reqs [][]byte, clients int, d time.Duration) *result {
	type worker struct {
		lat     []time.Duration
		errs    int
		actions map[string]int
		first   string
	}
	ws := make([]worker, clients)
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for i := range ws {
		wg.Add(1)
		go func(w *worker, off int) {
			defer wg.Done()
			w.actions = map[string]int{}
			w.lat = make([]time.Duration, 0, 1<<16)
			for n := off; time.Now().Before(deadline); n++ {
				body := reqs[n%len(reqs)]
				t0 := time.Now()
				action, err := call(body)
				w.lat = append(w.lat, time.Since(t0))
				if err != nil {
					w.errs++
					if w.first == "" {
						w.first = err.Error()
					}
					continue
				}
				w.actions[action]++
			}
		}(&ws[i], i*7)
	}
	wg.Wait()
	elapsed := time.Since(start)
	res := &result{Seconds: elapsed.Seconds(), Actions: map[string]int{}}
	var all []time.Duration
	for _, w := range ws {
		all = append(all, w.lat...)
		res.Errors += w.errs
		for a, n := range w.actions {
			res.Actions[a] += n
		}
		if res.FirstError == "" {
			res.FirstError = w.first
		}
	}
	res.Requests = len(all)
	res.Throughput = float64(len(all)-res.Errors) / elapsed.Seconds()
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	q := func(p float64) float64 {
		if len(all) == 0 {
			return 0
		}
		i := int(p*float64(len(all))+0.5) - 1
		return float64(all[max(0, min(i, len(all)-1))]) / 1e6
	}
	res.P50, res.P90, res.P99 = q(0.50), q(0.90), q(0.99)
	if len(all) > 0 {
		res.Max = float64(all[len(all)-1]) / 1e6
	}
	res.LatencyMS = map[string]any{"p50": res.P50, "p90": res.P90, "p99": res.P99, "max": res.Max}
	return res
}

// startServer runs ctxgate serve in this process on 127.0.0.1:0.
// interrupt is read by startServer and runDirect (serve --interrupt).
var interrupt = flag.String("interrupt", "auto", "in-process server and -direct: can a deadline stop a running call: auto, always, never (host.Options.Interrupt)")

// interruptMode is the -interrupt flag; a bad value ends the run.
func interruptMode() host.Interrupt {
	i, err := host.ParseInterrupt(*interrupt)
	if err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(2)
	}
	return i
}

func startServer(policy, module, wasm string, native bool, pool int) (*server.Server, string, error) {
	m, err := host.ParseModule(module)
	if err != nil {
		return nil, "", err
	}
	var code []byte
	if wasm != "" {
		if code, err = os.ReadFile(wasm); err != nil {
			return nil, "", err
		}
	}
	srv, err := server.New(context.Background(), server.Options{
		Policy: server.PolicySource{Path: policy}, RequirePolicy: true,
		Module: m, Wasm: code, Native: native, Interrupt: interruptMode(), PoolSize: pool, ReloadPoll: -1,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return nil, "", err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Shutdown(context.Background())
		return nil, "", err
	}
	go srv.Serve(ln)
	return srv, ln.Addr().String(), nil
}

// loadRequests builds DL19 gate requests, or reads the golden requests.
func loadRequests(k int) ([][]byte, string, error) {
	root, err := eval.FindRoot(".")
	if err != nil {
		return nil, "", errors.New("run from inside the repository: " + err.Error())
	}
	if dir, err := eval.FindDataDir(root); err == nil {
		d, err := eval.LoadDL19(dir)
		if err != nil {
			return nil, "", err
		}
		var out [][]byte
		var bytes int
		for _, it := range d.DL19Items(k) {
			b := gateRequest(it.Req)
			out = append(out, b)
			bytes += len(b)
		}
		return out, fmt.Sprintf("TREC DL19: %d queries, top %d hybrid passages each, %.1f KB per request on average",
			len(out), k, float64(bytes)/float64(len(out))/1024), nil
	}
	paths, _ := filepath.Glob(filepath.Join(root, "testdata", "requests", "default", "*.json"))
	var out [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, "", err
		}
		out = append(out, b)
	}
	if len(out) == 0 {
		return nil, "", errors.New("no DL19 data and no testdata/requests/default/*.json")
	}
	return out, fmt.Sprintf("testdata/requests/default (%d golden requests; ../shared/data not found)", len(out)), nil
}

type wireScores struct {
	Vector *float64 `json:"vector,omitempty"`
	BM25   *float64 `json:"bm25,omitempty"`
}

type wireChunk struct {
	ID     string     `json:"id"`
	DocID  string     `json:"doc_id"`
	Title  string     `json:"title,omitempty"`
	Text   string     `json:"text"`
	Scores wireScores `json:"scores"`
}

func gateRequest(r *eval.Request) []byte {
	chunks := make([]wireChunk, len(r.Chunks))
	for i, c := range r.Chunks {
		w := wireChunk{ID: c.ID, DocID: c.DocID, Title: c.Title, Text: c.Text}
		if c.HasVector {
			v := c.Vector
			w.Scores.Vector = &v
		}
		if c.HasBM25 {
			v := c.BM25
			w.Scores.BM25 = &v
		}
		chunks[i] = w
	}
	b, _ := json.Marshal(map[string]any{"query": r.Query, "chunks": chunks})
	return b
}

// runDirect drives the gate itself from clients goroutines: no HTTP, no
// server. Compared with a run through the server, it shows what the HTTP
// stack and the server add.
func runDirect(reqs [][]byte, source string, clients int, duration, warmup time.Duration, policy, module, wasm string, native bool, pool int, asJSON bool) error {
	var policyJSON []byte
	if policy != "" {
		b, err := os.ReadFile(policy)
		if err != nil {
			p, ok := policies.Get(policy)
			if !ok {
				return err
			}
			b = p
		}
		policyJSON = b
	}
	var ev host.Evaluator
	var err error
	name := "direct, native"
	if native {
		ev, err = host.NewNative(policyJSON)
	} else {
		m, perr := host.ParseModule(module)
		if perr != nil {
			return perr
		}
		o := host.Options{Module: m, Policy: policyJSON, PoolSize: pool, Interrupt: interruptMode()}
		name = "direct, module " + module
		if wasm != "" {
			if o.Wasm, err = os.ReadFile(wasm); err != nil {
				return err
			}
			name = "direct, module " + wasm
		}
		ev, err = host.New(context.Background(), o)
	}
	if err != nil {
		return err
	}
	defer ev.Close(context.Background())
	call := func(body []byte) (string, error) {
		out, err := ev.Evaluate(context.Background(), body)
		if err != nil {
			return "", err
		}
		// The action is the decision's first member: {"action":"inject",...
		a := out[len(`{"action":"`):]
		return string(a[:bytes.IndexByte(a, '"')]), nil
	}
	if warmup > 0 {
		driveWith(call, reqs, clients, warmup)
	}
	res, err := measured(func() *result { return driveWith(call, reqs, clients, duration) })
	if err != nil {
		return err
	}
	res.Source, res.Clients, res.Target, res.Server, res.GOMAXPROCS = source, clients, "host.Evaluator", name, runtime.GOMAXPROCS(0)
	res.write(os.Stdout, asJSON)
	return nil
}
