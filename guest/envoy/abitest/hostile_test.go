package abitest

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxgate/ctxgate/guest/envoy/filter"
	"github.com/ctxgate/ctxgate/internal/hostile"
)

// hostileExchanges are internal/hostile's inputs as the filter meets them
// under its default 1 MiB body limit: a gate request in the ctxgate
// extension of a chat body, and an answer to check as the upstream's reply
// to a small gated request.
func hostileExchanges(t *testing.T) ([]hostile.Case, []Exchange) {
	t.Helper()
	ctype := [][2]string{{"content-type", "application/json"}}
	inject := body(t, "inject.json")
	var cases []hostile.Case
	var exs []Exchange
	for _, c := range hostile.Cases(filter.DefaultMaxBodyBytes - 256) {
		var ex Exchange
		if c.Op == "evaluate" {
			ex = Exchange{Body: hostile.ChatBody(c.Body), Headers: ctype, Upstream: answer("An answer [S1].")}
		} else {
			var in struct{ Answer string }
			if err := jsonUnmarshal(c.Body, &in); err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			ex = Exchange{Body: inject, Headers: ctype, Upstream: answer(in.Answer)}
		}
		if len(ex.Body) > filter.DefaultMaxBodyBytes || len(ex.Upstream.Body) > filter.DefaultMaxBodyBytes {
			continue
		}
		cases, exs = append(cases, c), append(exs, ex)
	}
	return cases, exs
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// TestFilterHostile: every hostile input, on one plugin instance of every
// host (natively, and each built module under both ABI hosts), twice
// round, so each meets the state all the others leave. Every exchange must
// end (a local reply or a forwarded request: a held request is a hang in
// Envoy), no guest may trap, and every host must give the same bytes. The
// worst time per input is logged, never asserted: a body of 60,000
// metadata keys took the filter 2.7-5.6 s before its duplicate-key check
// stopped depending on the collector.
func TestFilterHostile(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the hostile inputs are a megabyte each")
	}
	cases, exs := hostileExchanges(t)
	runHostile(t, cases, exs, 2)
}

// TestFilterRepeated: one plugin instance of each host answers the
// largest valid inputs and the largest input of every hostile class ten
// times (CTXGATE_REPEAT=100 for the hundredth call; 3 with -short), and
// every answer is the first's bytes: no state a call leaves makes a later
// one trap, hang or answer differently. Ten by default for CI time, not
// memory: a round costs seconds in each of the five hosts, and
// TestFilterMemory holds the TinyGo filter's memory flat across rounds.
func TestFilterRepeated(t *testing.T) {
	rounds := hostile.Rounds(10, testing.Short())
	cases, exs := hostileExchanges(t)
	keep := hostile.Representatives(cases)
	var rc []hostile.Case
	var rx []Exchange
	for i := range cases {
		if keep[i] {
			rc, rx = append(rc, cases[i]), append(rx, exs[i])
		}
	}
	runHostile(t, rc, rx, rounds)
}

// runHostile runs exs (cases' exchanges) rounds times in every host, one
// plugin each, and logs the worst time per case and host.
func runHostile(t *testing.T, cases []hostile.Case, exs []Exchange, rounds int) {
	first := make([]Result, len(exs))
	firstHost := make([]string, len(exs))
	worst := map[string][]time.Duration{}
	var hosts []string
	for _, kind := range hostKinds(t) {
		t.Run(kind.name, func(t *testing.T) {
			h := kind.make(t)
			defer h.Close()
			if !h.Start(policyConfig(t, testPolicy, "")) {
				t.Fatalf("plugin did not start: %q", h.Logs())
			}
			hosts = append(hosts, kind.name)
			w := make([]time.Duration, len(exs))
			for round := 0; round < rounds; round++ {
				for i, ex := range exs {
					logs := len(h.Logs())
					start := time.Now()
					r := h.Do(ex)
					w[i] = max(w[i], time.Since(start))
					if !r.Forwarded && r.Local == nil {
						t.Fatalf("call %d of %s: the filter held the request (a hang in Envoy)", round+1, cases[i].Name)
					}
					for _, l := range h.Logs()[logs:] {
						if strings.Contains(l, "trapped") || strings.Contains(l, "panic") {
							t.Fatalf("call %d of %s: %s", round+1, cases[i].Name, l)
						}
					}
					if firstHost[i] == "" {
						first[i], firstHost[i] = r, kind.name
					} else {
						sameBytes(t, firstHost[i], first[i], kind.name+" call "+strconv.Itoa(round+1), r)
					}
				}
			}
			worst[kind.name] = w
		})
	}
	var b strings.Builder
	b.WriteString("worst time per exchange (ms), " + strings.Join(hosts, " / ") + ":\n")
	order := make([]int, len(cases))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return cases[order[a]].Class < cases[order[b]].Class })
	for _, i := range order {
		c := cases[i]
		b.WriteString("  " + c.Class + ": " + c.Name + ":")
		for _, h := range hosts {
			if w := worst[h]; w != nil {
				b.WriteString(" " + strconv.FormatFloat(float64(w[i].Microseconds())/1e3, 'f', 1, 64))
			}
		}
		b.WriteByte('\n')
	}
	t.Log(b.String())
}
