package gate

import (
	"math"
	"strings"
	"testing"
)

func tokenStrings(s string) []string {
	var text []byte
	var ends []int
	toks := tokenize(s, nil, &text, &ends)
	out := make([]string, len(toks))
	start := 0
	for i := range toks {
		out[i] = string(text[start:ends[i]])
		start = ends[i]
		if toks[i].hash != hashString(out[i]) {
			out[i] += "!hash"
		}
	}
	return out
}

func TestTokenize(t *testing.T) {
	cases := []struct{ in, want string }{
		{"Photosynthesis? Light-energy, (CO2)!", "photosynthesis light energy co2"},
		{"  ", ""},
		{"Ünïcödé ΣΊΣΥΦΟΣ москва", "ünïcödé σίσυφοσ москва"},
		{"don't", "don t"},
		{"東京都に住む", "東京 京都 都に に住 住む"},
		{"a 東 b", "a 東 b"},
		{"GPT4 vs gpt4", "gpt4 vs gpt4"},
		{"한국어 text", "한국 국어 text"},
		{"हिन्दी भाषा", "हिन्दी भाषा"},
	}
	for _, c := range cases {
		got := strings.Join(tokenStrings(c.in), " ")
		if got != c.want {
			t.Errorf("%q: got %q want %q", c.in, got, c.want)
		}
	}
}

func TestHashSet(t *testing.T) {
	var s hashSet
	s.reset(2)
	for i := uint64(0); i < 1000; i++ {
		s.add(i * 7919)
	}
	for i := uint64(0); i < 1000; i++ {
		if !s.has(i * 7919) {
			t.Fatalf("missing %d", i)
		}
	}
	if s.has(13) || s.count != 1000 {
		t.Fatalf("count %d", s.count)
	}
	if !stopSet001.has(hashString("the")) || stopSet001.has(hashString("photosynthesis")) {
		t.Fatal("stop words")
	}
	if len(stopWords001) != 105 {
		t.Fatalf("seed 001 has 105 stop words, got %d", len(stopWords001))
	}
}

func TestExpDet(t *testing.T) {
	for x := -30.0; x <= 30; x += 0.37 {
		got, want := expDet(x), math.Exp(x)
		if math.Abs(got-want)/want > 1e-14 {
			t.Fatalf("exp(%v) = %v want %v", x, got, want)
		}
	}
	if s := sigmoid(0); s != 0.5 {
		t.Fatalf("sigmoid(0) = %v", s)
	}
	if s := sigmoid(-1000); s < 0 || s > 1e-300 {
		t.Fatalf("sigmoid(-1000) = %v", s)
	}
	if !near(pow2(-1), 0.5) || !near(pow2(3), 8) {
		t.Fatal("pow2")
	}
}

// Python's "{:.0%}" rounds half to even on the binary value of x·100.
func TestPercentLikePython(t *testing.T) {
	for _, c := range []struct {
		x    float64
		want string
	}{{1, "100%"}, {0.8, "80%"}, {0.125, "12%"}, {0.135, "14%"}, {0.005, "0%"}, {0.015, "2%"}, {0.7142857, "71%"}} {
		if got := percent(c.x); got != c.want {
			t.Errorf("percent(%v) = %s want %s", c.x, got, c.want)
		}
	}
}

func TestSortDescStable(t *testing.T) {
	key := []float64{0.5, 0.9, 0.5, 0.1, 0.9, 0.5}
	idx := []int{0, 1, 2, 3, 4, 5}
	sortDesc(idx, key, make([]int, 6))
	want := []int{1, 4, 0, 2, 5, 3}
	for i := range want {
		if idx[i] != want[i] {
			t.Fatalf("got %v want %v", idx, want)
		}
	}
}
