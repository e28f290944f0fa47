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

// Chunked, the gaps come out as Build finds them, within what the sketches
// approximate: a carried gap links later wordings only through its most
// asked ones, so a wording similar only to a rarer one may stay apart. With
// chunks of 100 and room for every gap, and with chunks of 37 and room for
// 200 gaps (the log has some 550), the planted gaps (the three biggest in
// the second case: a gap of 4 can be dropped while it has 1 event) keep
// their counts within one event or 2%, their first time and diagnosis;
// every event is counted once, in a gap or among the dropped; the overall
// trend is exact.
func TestStreamChunksKeepClusters(t *testing.T) {
	evs, _ := synthLexical([]int{300, 120, 40, 9, 4}, 500, 9)
	want := build(t, evs)
	for _, so := range []StreamOptions{{ChunkEvents: 100}, {ChunkEvents: 37, MaxGaps: 200}} {
		got := streamAll(t, evs, so)
		if got.Stats.Chunks < 2 {
			t.Fatalf("%+v: %d chunks, want several", so, got.Stats.Chunks)
		}
		n := 5
		if so.MaxGaps > 0 {
			n = 3
		}
		for i := 0; i < n; i++ {
			g, w := &got.Clusters[i], &want.Clusters[i]
			d := g.Count - w.Count
			if d < 0 {
				d = -d
			}
			if d > max(1, w.Count/50) || g.FirstSeen != w.FirstSeen || g.Diagnosis.Mode != w.Diagnosis.Mode {
				t.Errorf("%+v: gap %d: %d events from %s, %s; want %d from %s, %s", so, i+1, g.Count, g.FirstSeen, g.Diagnosis.Mode,
					w.Count, w.FirstSeen, w.Diagnosis.Mode)
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
