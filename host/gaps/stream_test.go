package gaps

import (
	"bytes"
	"runtime"
	"testing"
)

func streamAll(t testing.TB, evs []Event, so StreamOptions) *Report {
	t.Helper()
	s, err := NewStream(DefaultOptions(), so)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		s.Add(ev)
	}
	rep, err := s.Report()
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// A log that fits in one chunk gives exactly Build's report.
func TestStreamSmallIsExact(t *testing.T) {
	evs, _ := synthLexical([]int{30, 12, 5, 2}, 50, 7)
	var a, b bytes.Buffer
	if err := WriteJSON(&a, build(t, evs)); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&b, streamAll(t, evs, StreamOptions{})); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("a one-chunk stream differs from Build")
	}
}

// Chunked, the gaps come out as Build finds them: with chunks of 100 and
// room for every gap, the same counts, kinds, times, diagnoses and top
// wording counts (among equally asked wordings the representative may
// differ: centrality sees only the kept ones); with
// chunks of 37 and room for 200 gaps (the log has some 550), the big gaps
// within 2% (a wording similar only to one no longer among a gap's
// linkWordings stays apart). The trend counts every event either way.
func TestStreamChunksKeepClusters(t *testing.T) {
	evs, _ := synthLexical([]int{300, 120, 40, 9, 4}, 500, 9)
	want := build(t, evs)
	for _, tc := range []struct {
		so    StreamOptions
		exact int // leading gaps that must match exactly; the rest of the top 3 within 2%
	}{{StreamOptions{ChunkEvents: 100}, 5}, {StreamOptions{ChunkEvents: 37, MaxGaps: 200}, 1}} {
		so := tc.so
		got := streamAll(t, evs, so)
		if got.Stats.Chunks < 2 {
			t.Fatalf("%+v: %d chunks, want several", so, got.Stats.Chunks)
		}
		for i := 0; i < max(tc.exact, 3); i++ {
			g, w := &got.Clusters[i], &want.Clusters[i]
			if i >= tc.exact {
				if d := g.Count - w.Count; d*50 > w.Count || -d*50 > w.Count {
					t.Errorf("%+v: gap %d: %d events, want %d within 2%%", so, i+1, g.Count, w.Count)
				}
				continue
			}
			if g.Count != w.Count || g.SourceCounts != w.SourceCounts || g.FirstSeen != w.FirstSeen || g.LastSeen != w.LastSeen ||
				g.Queries[0].Count != w.Queries[0].Count || g.Diagnosis.Mode != w.Diagnosis.Mode {
				t.Errorf("%+v: gap %d: %d events %+v %s..%s %+v, want %d %+v %s..%s %+v", so, i+1, g.Count, g.SourceCounts,
					g.FirstSeen, g.LastSeen, g.Queries[0], w.Count, w.SourceCounts, w.FirstSeen, w.LastSeen, w.Queries[0])
			}
		}
		total := got.Stats.DroppedEvents
		for _, c := range got.Clusters {
			total += c.Count
		}
		if total != len(evs) || got.Stats.Events != len(evs) {
			t.Errorf("%+v: %d events in gaps and dropped, %d counted; want %d", so, total, got.Stats.Events, len(evs))
		}
		tr := got.timeline.trend(got.Clusters)
		wt := NewTrend(evs, want.Clusters)
		if tr.Unit != wt.Unit || !tr.Start.Equal(wt.Start) || len(tr.Overall) != len(wt.Overall) {
			t.Fatalf("%+v: trend %v from %v (%d), want %v from %v (%d)", so, tr.Unit, tr.Start, len(tr.Overall), wt.Unit, wt.Start, len(wt.Overall))
		}
		for i := range wt.Overall {
			if tr.Overall[i] != wt.Overall[i] {
				t.Fatalf("%+v: bucket %d: %v, want %v", so, i, tr.Overall[i], wt.Overall[i])
			}
		}
		for i := 0; i < tc.exact; i++ {
			for j := range wt.Clusters[i] {
				if tr.Clusters[i][j] != wt.Clusters[i][j] {
					t.Fatalf("%+v: gap %d bucket %d: %d, want %d", so, i+1, j, tr.Clusters[i][j], wt.Clusters[i][j])
				}
			}
		}
	}
}

// Memory is bounded by the chunk and the carried gaps, not by the events:
// four times the events, about the same live heap.
func TestStreamMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 50k events")
	}
	heap := func(n int) uint64 {
		s, err := NewStream(DefaultOptions(), StreamOptions{ChunkEvents: 2000, MaxGaps: 500})
		if err != nil {
			t.Fatal(err)
		}
		evs, _ := synthLexical(tailSizes(n/10), n/20, 11)
		for i := 0; i < 10; i++ { // ten replicas' logs, one after another
			for _, ev := range evs {
				s.Add(ev)
			}
		}
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		if _, err := s.Report(); err != nil {
			t.Fatal(err)
		}
		runtime.KeepAlive(s)
		return m.HeapAlloc
	}
	small, large := heap(10_000), heap(40_000)
	t.Logf("live heap: %d KB at 10k events, %d KB at 40k", small>>10, large>>10)
	if large > small*3/2+4<<20 {
		t.Errorf("live heap grows with the events: %d KB at 10k, %d KB at 40k", small>>10, large>>10)
	}
}
