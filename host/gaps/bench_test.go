package gaps

import (
	"sync"
	"testing"
)

// Benchmarks of clustering (Build: units, both paths, diagnosis, ranking) on
// realistic shapes: a long tail of gap sizes (the top gap ~5% of events,
// sizes falling as 1/rank) plus 30% one-off questions. Run:
//
//	go test ./host/gaps -run '^$' -bench Build -benchtime 1x
//
// Timings are reported, never asserted (the machine is shared and noisy).

// tailSizes returns cluster sizes summing to about 70% of n.
func tailSizes(n int) []int {
	top := n / 20
	var sizes []int
	total := 0
	for k := 1; total < n*7/10; k++ {
		s := top / k
		if s < 2 {
			s = 2
		}
		sizes = append(sizes, s)
		total += s
	}
	return sizes
}

var benchSets sync.Map // name -> []Event

func benchEvents(b *testing.B, name string, mk func() []Event) []Event {
	if v, ok := benchSets.Load(name); ok {
		return v.([]Event)
	}
	evs := mk()
	benchSets.Store(name, evs)
	return evs
}

func embeddedSet(n int) []Event {
	sizes := tailSizes(n)
	sum := 0
	for _, s := range sizes {
		sum += s
	}
	evs, _ := synthEmbedded(embedSpec{dim: 384, sizes: sizes, singletons: n - sum, memberCos: 0.95, anisotropy: 0.3, seed: 99})
	return evs
}

func lexicalSet(n int) []Event {
	sizes := tailSizes(n)
	sum := 0
	for _, s := range sizes {
		sum += s
	}
	evs, _ := synthLexical(sizes, n-sum, 98)
	return evs
}

func benchBuild(b *testing.B, evs []Event) {
	b.ReportAllocs()
	b.ResetTimer()
	var rep *Report
	for i := 0; i < b.N; i++ {
		var err error
		if rep, err = Build(evs, DefaultOptions()); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	st := rep.Stats
	b.ReportMetric(float64(st.Clusters), "clusters")
	b.ReportMetric(float64(st.EmbedCandidates)/float64(len(evs)), "lsh-cands/event")
	b.ReportMetric(float64(st.EmbedCompared+st.LexCandidates)/float64(len(evs)), "compares/event")
}

func BenchmarkBuildEmbedding10k(b *testing.B) {
	benchBuild(b, benchEvents(b, "e10k", func() []Event { return embeddedSet(10_000) }))
}

func BenchmarkBuildEmbedding100k(b *testing.B) {
	benchBuild(b, benchEvents(b, "e100k", func() []Event { return embeddedSet(100_000) }))
}

func BenchmarkBuildLexical10k(b *testing.B) {
	benchBuild(b, benchEvents(b, "l10k", func() []Event { return lexicalSet(10_000) }))
}

func BenchmarkBuildLexical100k(b *testing.B) {
	benchBuild(b, benchEvents(b, "l100k", func() []Event { return lexicalSet(100_000) }))
}
