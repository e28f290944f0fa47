package abitest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ctxgate/ctxgate/guest/envoy/filter"
)

// TestEnvoyEndToEnd runs examples/envoy/envoy.yaml in a real Envoy with the
// built module, against a local upstream standing in for the LLM API. It
// needs an `envoy` binary (1.33+) on PATH and skips, saying so, without one.
func TestEnvoyEndToEnd(t *testing.T) {
	envoy, err := exec.LookPath("envoy")
	if err != nil {
		t.Skip("envoy is not on PATH: this end-to-end test needs an Envoy 1.33+ binary (func-e run, or the envoyproxy/envoy image); the ABI hosts in TestFilterABI cover the filter without it")
	}
	mod, err := BuildGo()
	if err != nil {
		t.Fatalf("cannot build the filter module: %v", err)
	}

	var mu sync.Mutex
	var upstreamBodies [][]byte
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		upstreamBodies = append(upstreamBodies, b)
		mu.Unlock()
		w.Header().Set("content-type", "application/json")
		w.Write(answer("At sea level water boils at 100 degrees Celsius [S1].").Body)
	}))
	defer up.Close()

	listen, admin := freePort(t), freePort(t)
	cfg := envoyConfig(t, mod.Path, up.Listener.Addr().(*net.TCPAddr).Port, listen, admin)
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "envoy.yaml")
	if err := os.WriteFile(cfgPath, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logs bytes.Buffer
	cmd := exec.CommandContext(ctx, envoy, "-c", cfgPath, "--base-id", strconv.Itoa(os.Getpid()), "--log-level", "warn")
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cancel()
		cmd.Wait()
		if t.Failed() {
			t.Logf("envoy log:\n%s", logs.String())
		}
	}()
	adminURL := "http://127.0.0.1:" + strconv.Itoa(admin)
	waitReady(t, adminURL+"/ready")
	base := "http://127.0.0.1:" + strconv.Itoa(listen)

	// inject: the upstream gets the rewritten body, the client the headers.
	resp := post(t, base, body(t, "inject.json"))
	if resp.StatusCode != 200 || resp.Header.Get("x-ctxgate-action") != "inject" {
		t.Fatalf("inject: status %d, headers %v", resp.StatusCode, resp.Header)
	}
	if resp.Header.Get("x-ctxgate-answer-check") != "ok" || resp.Header.Get("x-ctxgate-soft-refusal") != "false" {
		t.Errorf("answer check headers: %v", resp.Header)
	}
	mu.Lock()
	got := upstreamBodies[len(upstreamBodies)-1]
	mu.Unlock()
	o := decide(t, testPolicy, body(t, "inject.json"))
	if bytes.Contains(got, []byte(`"documents"`)) || !strings.Contains(string(got), jsonString(o.Prompt.Sources)) {
		t.Errorf("upstream body does not carry the core's <sources> block, or keeps the documents:\n%s", got)
	}

	// hard refusal: answered by Envoy, the upstream never called.
	mu.Lock()
	calls := len(upstreamBodies)
	mu.Unlock()
	resp = post(t, base, body(t, "refuse.json"))
	if resp.StatusCode != 200 || resp.Header.Get("x-ctxgate-action") != "refuse" || resp.Header.Get("x-ctxgate-refusal") != "hard" {
		t.Errorf("refuse: status %d, headers %v", resp.StatusCode, resp.Header)
	}
	mu.Lock()
	if len(upstreamBodies) != calls {
		t.Errorf("a hard refusal reached the upstream")
	}
	mu.Unlock()

	// malformed JSON fails closed with the error JSON.
	resp = post(t, base, []byte(`{"messages": [`))
	if resp.StatusCode != 400 || resp.Header.Get("x-ctxgate-error") != "bad_json" {
		t.Errorf("malformed: status %d, headers %v", resp.StatusCode, resp.Header)
	}

	stats := get(t, adminURL+"/stats?filter=ctxgate")
	for _, want := range []string{"ctxgate.action.inject: 1", "ctxgate.action.refuse: 1", "ctxgate.error.bad_json: 1", "ctxgate.refusal.hard: 1"} {
		if !strings.Contains(stats, want) {
			t.Errorf("stats lack %q:\n%s", want, stats)
		}
	}
}

// envoyConfig is examples/envoy/envoy.yaml pointed at the built module, the
// test upstream (plain HTTP) and free ports.
func envoyConfig(t *testing.T, module string, upstream, listen, admin int) []byte {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "examples", "envoy", "envoy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := yaml.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	at := func(v any, keys ...any) any {
		for _, k := range keys {
			switch k := k.(type) {
			case string:
				v = v.(map[string]any)[k]
			case int:
				v = v.([]any)[k]
			}
		}
		return v
	}
	static := at(c, "static_resources")
	l := at(static, "listeners", 0).(map[string]any)
	at(l, "address", "socket_address").(map[string]any)["port_value"] = listen
	wasm := at(l, "filter_chains", 0, "filters", 0, "typed_config", "http_filters", 0, "typed_config", "config").(map[string]any)
	at(wasm, "vm_config", "code", "local").(map[string]any)["filename"] = module
	// The tests' own policy, so the sample bodies decide as they are named.
	at(wasm, "configuration").(map[string]any)["value"] = string(policyConfig(t, testPolicy, ""))
	cl := at(static, "clusters", 0).(map[string]any)
	cl["type"] = "STATIC"
	delete(cl, "transport_socket")
	delete(cl, "dns_lookup_family")
	sa := at(cl, "load_assignment", "endpoints", 0, "lb_endpoints", 0, "endpoint", "address", "socket_address").(map[string]any)
	sa["address"], sa["port_value"] = "127.0.0.1", upstream
	at(c, "admin", "address", "socket_address").(map[string]any)["port_value"] = admin
	out, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitReady(t *testing.T, url string) {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if r, err := http.Get(url); err == nil {
			r.Body.Close()
			if r.StatusCode == 200 {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("envoy not ready after 30s")
}

func post(t *testing.T, base string, b []byte) *http.Response {
	r, err := http.Post(base+"/v1/chat/completions", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, r.Body)
	r.Body.Close()
	return r
}

func get(t *testing.T, url string) string {
	r, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return string(b)
}

// jsonString is s as the splicer writes it inside the body (jsonx escaping,
// which matches encoding/json's HTML-safe default).
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return strings.Trim(string(b), `"`)
}

// TestExampleConfigs: the plugin configurations in examples/envoy (the Envoy
// config's StringValue and the Istio WasmPlugin's pluginConfig, which Istio
// hands the plugin as JSON) are valid for the filter, and the Envoy config
// rewrites cleanly for the end-to-end test. Runs without Envoy.
func TestExampleConfigs(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	var envoyCfg map[string]any
	raw, err := os.ReadFile(filepath.Join(root, "examples", "envoy", "envoy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &envoyCfg); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		StaticResources struct {
			Listeners []struct {
				FilterChains []struct {
					Filters []struct {
						TypedConfig struct {
							HTTPFilters []struct {
								Name        string
								TypedConfig struct {
									Config struct {
										Configuration struct{ Value string }
									}
								} `yaml:"typed_config"`
							} `yaml:"http_filters"`
						} `yaml:"typed_config"`
					}
				} `yaml:"filter_chains"`
			}
		} `yaml:"static_resources"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	plugin := doc.StaticResources.Listeners[0].FilterChains[0].Filters[0].TypedConfig.HTTPFilters[0]
	if plugin.Name != "ctxgate" {
		t.Fatalf("first http filter is %q", plugin.Name)
	}
	if _, err := filter.ParseConfig([]byte(plugin.TypedConfig.Config.Configuration.Value)); err != nil {
		t.Errorf("envoy.yaml plugin configuration: %v", err)
	}
	if cfg := envoyConfig(t, "/m.wasm", 1, 2, 3); !bytes.Contains(cfg, []byte("/m.wasm")) {
		t.Errorf("e2e rewrite lost the module path")
	}
	checkEnvoyDeployment(t, root, envoyCfg)

	var istio struct {
		Kind string
		Spec struct {
			PluginConfig map[string]any `yaml:"pluginConfig"`
		}
	}
	raw, err = os.ReadFile(filepath.Join(root, "examples", "envoy", "istio-wasmplugin.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &istio); err != nil || istio.Kind != "WasmPlugin" {
		t.Fatalf("istio manifest: kind %q, %v", istio.Kind, err)
	}
	js, _ := json.Marshal(istio.Spec.PluginConfig)
	if _, err := filter.ParseConfig(js); err != nil {
		t.Errorf("istio pluginConfig %s: %v", js, err)
	}
}

// checkEnvoyDeployment: the example runs the committed filter, uses the Wasm
// filter's failure_policy (fail_open is deprecated in the pinned Envoy API),
// and verifies the upstream's certificate for the host it sends the API key to.
func checkEnvoyDeployment(t *testing.T, root string, c map[string]any) {
	t.Helper()
	at := func(v any, keys ...any) any {
		for _, k := range keys {
			switch k := k.(type) {
			case string:
				m, _ := v.(map[string]any)
				v = m[k]
			case int:
				l, _ := v.([]any)
				if k >= len(l) {
					return nil
				}
				v = l[k]
			}
		}
		return v
	}
	static := at(c, "static_resources")
	wasm := at(static, "listeners", 0, "filter_chains", 0, "filters", 0, "typed_config", "http_filters", 0, "typed_config", "config")
	if at(wasm, "fail_open") != nil {
		t.Error("envoy.yaml sets the deprecated fail_open of the Wasm filter; use failure_policy")
	}
	if got := at(wasm, "failure_policy"); got != "FAIL_CLOSED" {
		t.Errorf("Wasm filter failure_policy %v, want FAIL_CLOSED", got)
	}
	module, _ := at(wasm, "vm_config", "code", "local", "filename").(string)
	if _, err := os.Stat(filepath.Join(root, module)); err != nil {
		t.Errorf("the example's module %q is not in the tree (run from the repository root): %v", module, err)
	}
	tls := at(static, "clusters", 0, "transport_socket", "typed_config")
	sni, _ := at(tls, "sni").(string)
	host, _ := at(static, "clusters", 0, "load_assignment", "endpoints", 0, "lb_endpoints", 0, "endpoint", "address", "socket_address", "address").(string)
	vc := at(tls, "common_tls_context", "validation_context")
	if sni == "" || sni != host {
		t.Errorf("upstream TLS sni %q, want the upstream host %q", sni, host)
	}
	if ca, _ := at(vc, "trusted_ca", "filename").(string); ca == "" {
		t.Error("the upstream's certificate is not verified: no validation_context.trusted_ca")
	}
	if san := at(vc, "match_typed_subject_alt_names", 0); at(san, "san_type") != "DNS" || at(san, "matcher", "exact") != host {
		t.Errorf("validation_context does not match the certificate to %q: %v", host, san)
	}
}
