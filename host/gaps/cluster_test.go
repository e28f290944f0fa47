package gaps

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"
)

func build(t testing.TB, evs []Event) *Report {
	t.Helper()
	rep, err := Build(evs, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// Known clusters, tight enough that every pair inside a cluster is above
// 0.85: the report must reproduce them exactly, ranked by size.
func TestEmbeddingKnownClusters(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec embedSpec
	}{
		{"dim64", embedSpec{dim: 64, sizes: []int{40, 17, 6, 2, 2}, singletons: 300, memberCos: 0.975, seed: 1}},
		{"dim384", embedSpec{dim: 384, sizes: []int{40, 17, 6, 2, 2}, singletons: 300, memberCos: 0.975, seed: 2}},
		{"dim384-anisotropic", embedSpec{dim: 384, sizes: []int{40, 17, 6, 2, 2}, singletons: 300, memberCos: 0.975, anisotropy: 0.5, seed: 3}},
		{"dim8", embedSpec{dim: 8, sizes: []int{30, 5}, singletons: 0, memberCos: 0.995, seed: 4}},
	} {
		for _, path := range []string{"all-pairs", "lsh"} {
			t.Run(tc.name+"/"+path, func(t *testing.T) {
				if path == "lsh" {
					defer forceLSH()()
				}
				evs, labels := synthEmbedded(tc.spec)
				rep := build(t, evs)
				if !samePartition(partitionOf(rep, len(evs)), labels) {
					t.Fatalf("partition differs from the known clusters: %d clusters, want %d", len(rep.Clusters), len(tc.spec.sizes)+tc.spec.singletons)
				}
				for i, n := range tc.spec.sizes {
					if rep.Clusters[i].Count != n {
						t.Errorf("cluster %d: count %d, want %d", i+1, rep.Clusters[i].Count, n)
					}
					if rep.Clusters[i].Path != "embedding" {
						t.Errorf("cluster %d: path %q", i+1, rep.Clusters[i].Path)
					}
				}
			})
		}
	}
}

// forceLSH makes the embedding path use LSH at any size; call the returned
// func to restore.
func forceLSH() func() {
	old := exactPairsBelow
	exactPairsBelow = 0
	return func() { exactPairsBelow = old }
}

// bruteEmbed is the definition the LSH path approximates: single-link
// components of the graph "cosine >= threshold", by all pairs.
func bruteEmbed(evs []Event, cos float64) []int {
	n := len(evs)
	uf := newUnionFind(n)
	ix := newEmbedIndex(len(evs[0].QueryEmbedding))
	for i := range evs {
		ix.add(int32(i), evs[i].QueryEmbedding)
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if dot(ix.row(int32(i)), ix.row(int32(j))) >= cos {
				uf.union(int32(i), int32(j))
			}
		}
	}
	p := make([]int, n)
	for i := range p {
		p[i] = int(uf.find(int32(i)))
	}
	return p
}

// Loose clusters (member pairs around 0.86, many pairs below 0.85) and
// anisotropic embeddings: every reported link is real (precision 1 against
// the all-pairs definition) and almost every true same-cluster pair is found.
func TestEmbeddingMatchesAllPairs(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec embedSpec
	}{
		{"loose-128", embedSpec{dim: 128, sizes: []int{200, 120, 60, 30, 10, 5, 3, 3, 2, 2, 2}, singletons: 1500, memberCos: 0.93, seed: 11}},
		{"loose-384-anisotropic", embedSpec{dim: 384, sizes: []int{150, 80, 40, 20, 8, 4, 2, 2, 2}, singletons: 1500, memberCos: 0.93, anisotropy: 0.6, seed: 12}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs, _ := synthEmbedded(tc.spec)
			truth := bruteEmbed(evs, 0.85)
			rep := build(t, evs)
			p, r := pairScores(partitionOf(rep, len(evs)), truth)
			t.Logf("pair precision %.4f recall %.4f; %+v", p, r, rep.Stats)
			if p != 1 {
				t.Errorf("precision %.4f: a link below the threshold was reported", p)
			}
			if r < 0.98 {
				t.Errorf("recall %.4f < 0.98 against all pairs", r)
			}
		})
	}
}

// Obvious pairs (cosine >= 0.95) hidden among thousands of unrelated queries
// must all be found: a pair has no third member to bridge a missed link.
func TestEmbeddingObviousPairsFound(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	const dim, pairs, noise = 384, 400, 4000
	var evs []Event
	for i := 0; i < pairs; i++ {
		a := unitVec(r, dim)
		b := around(r, a, 0.96)
		if dot(a, b) < 0.95 {
			b = around(r, a, 0.97)
		}
		evs = append(evs, Event{Kind: KindRefusalHard, Query: "pair a " + itoa(i), QueryEmbedding: a},
			Event{Kind: KindRefusalSoft, Query: "pair b " + itoa(i), QueryEmbedding: b})
	}
	for i := 0; i < noise; i++ {
		evs = append(evs, Event{Kind: KindLowConfidence, Query: "noise " + itoa(i), QueryEmbedding: unitVec(r, dim)})
	}
	rep := build(t, evs)
	p := partitionOf(rep, len(evs))
	missed := 0
	for i := 0; i < pairs; i++ {
		if dot(evs[2*i].QueryEmbedding, evs[2*i+1].QueryEmbedding) >= 0.95 && p[2*i] != p[2*i+1] {
			missed++
		}
	}
	if missed > 0 {
		t.Errorf("%d of %d obvious pairs missed", missed, pairs)
	}
	if got := len(rep.Clusters); got != pairs+noise {
		t.Errorf("%d clusters, want %d", got, pairs+noise)
	}
}

func TestLexicalKnownClusters(t *testing.T) {
	sizes := []int{60, 25, 9, 4, 2}
	evs, labels := synthLexical(sizes, 400, 5)
	rep := build(t, evs)
	if !samePartition(partitionOf(rep, len(evs)), labels) {
		t.Fatalf("partition differs from the known clusters: %d clusters, want %d", len(rep.Clusters), len(sizes)+400)
	}
	for i, n := range sizes {
		c := rep.Clusters[i]
		if c.Count != n || c.Path != "lexical" || c.SourceCounts.RefusalSoft != n {
			t.Errorf("cluster %d: count %d path %s counts %+v, want %d lexical soft refusals", i+1, c.Count, c.Path, c.SourceCounts, n)
		}
	}
}

// The lexical join is exact: on random small-vocabulary sets (many
// borderline pairs) its links, joined without the guard, must equal the
// all-pairs Jaccard components.
func TestLexicalMatchesAllPairs(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	vocab := []string{"refund", "invoice", "billing", "account", "password", "reset", "email", "export", "report", "api",
		"token", "webhook", "sso", "saml", "okta", "plan", "upgrade", "seat", "delete", "team"}
	var evs []Event
	for i := 0; i < 1500; i++ {
		n := 1 + r.IntN(5)
		q := ""
		for j := 0; j < n; j++ {
			q += vocab[r.IntN(8+r.IntN(12))] + " "
		}
		evs = append(evs, Event{Kind: KindRefusalHard, Query: q})
	}
	units := buildUnits(evs)
	uf := newUnionFind(len(units))
	for i := range units {
		for j := i + 1; j < len(units); j++ {
			a, b := units[i].terms, units[j].terms
			if len(a) > 0 && len(b) > 0 && jaccard(a, b) >= 0.6-1e-9 {
				uf.union(int32(i), int32(j))
			}
		}
	}
	unitOf := map[string]int{}
	for i := range units {
		unitOf[units[i].key] = i
	}
	truth := make([]int, len(evs))
	for i := range evs {
		truth[i] = int(uf.find(int32(unitOf[normQuery(evs[i].Query)])))
	}
	opt := DefaultOptions()
	opt.links = 1 << kindTerms
	rep, err := Build(evs, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !samePartition(partitionOf(rep, len(evs)), truth) {
		p, rc := pairScores(partitionOf(rep, len(evs)), truth)
		t.Fatalf("lexical join differs from all pairs: precision %.4f recall %.4f", p, rc)
	}
}

// Mixed files: an event without an embedding joins the embedded cluster it
// shares terms with; two embedded queries are never joined on terms alone.
func TestMixedPaths(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	a, b := unitVec(r, 32), unitVec(r, 32)
	evs := []Event{
		{Kind: KindRefusalHard, Query: "How do I rotate an API key?", QueryEmbedding: a},
		{Kind: KindRefusalHard, Query: "rotating api keys", QueryEmbedding: around(r, a, 0.99)},
		{Kind: KindThumbsDown, Query: "Rotate the API keys"}, // no embedding: lexical
		// Same terms as the first, but an embedding far from it: cosine decides.
		{Kind: KindRefusalSoft, Query: "API key rotation how?", QueryEmbedding: b},
	}
	rep := build(t, evs)
	p := partitionOf(rep, len(evs))
	if p[0] != p[1] || p[0] != p[2] {
		t.Errorf("events 0,1,2 should share a cluster: %v", p)
	}
	if rep.Clusters[p[0]].Path != "mixed" {
		t.Errorf("path %q, want mixed", rep.Clusters[p[0]].Path)
	}
	// "rotation" does not stem to "rotat(e)": terms {api, key, rotation} vs
	// {api, key, rotat}: Jaccard 0.5; and both sides have embeddings anyway.
	if p[3] == p[0] {
		t.Errorf("event 3 joined on terms although both sides have embeddings")
	}
}

func TestSameQueryAlwaysClusters(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	evs := []Event{
		{Kind: KindRefusalHard, Query: "What is SAML?", QueryEmbedding: unitVec(r, 16)},
		{Kind: KindRefusalHard, Query: "  what is   saml "}, // same question, no embedding
		{Kind: KindRefusalSoft, Query: "what is saml?", QueryEmbedding: unitVec(r, 16)},
		{Kind: KindRefusalSoft, Query: "what is it?"}, // stop words only: no terms
		{Kind: KindRefusalSoft, Query: "What is it"},
	}
	rep := build(t, evs)
	if len(rep.Clusters) != 2 || rep.Clusters[0].Count != 3 || rep.Clusters[1].Count != 2 {
		t.Fatalf("clusters %+v", rep.Clusters)
	}
}

// A masked question (decision_log_mask) is an opaque token: repeats of one
// token are one gap, built or streamed across chunks, but two tokens never
// join, not through the shared "masked:" prefix, nor letters they happen to
// share, nor the (masked) documents their retrieval returned.
func TestMaskedQueriesOpaque(t *testing.T) {
	docs := []TopChunk{{ID: "masked:c1c1c1c1c1c1", DocID: "masked:d1d1d1d1d1d1", Score: 0.1},
		{ID: "masked:c2c2c2c2c2c2", DocID: "masked:d2d2d2d2d2d2", Score: 0.09}}
	var evs []Event
	for _, q := range []string{"masked:3kQ2aBc9xYzQ", "masked:Zz81bqQ0rT5w", "masked:3kQ2aBc9xYzQ",
		"masked:Zz81bqQ0rT5x", "masked:9_-Lm0pQ7rSt", "masked:3kQ2aBc9xYzQ"} {
		evs = append(evs, Event{Kind: KindRefusalHard, Query: q, TopChunks: docs})
	}
	for _, so := range []StreamOptions{{}, {ChunkEvents: 2}} {
		rep := streamAll(t, evs, so)
		var got []int
		for _, c := range rep.Clusters {
			got = append(got, c.Count)
		}
		if len(got) != 4 || got[0] != 3 || rep.Clusters[0].Representative != "masked:3kQ2aBc9xYzQ" {
			t.Errorf("chunks of %d: gaps of %v events, want [3 1 1 1]", so.ChunkEvents, got)
		}
	}
	for q, want := range map[string]bool{"masked:3kQ2aBc9xYzQ": true, "masked:9_-Lm0pQ7rSt": true,
		"masked: how do I reset": false, "masked:3kQ2aBc9xYz": false, "masked:3kQ2aBc9x!zQ": false, "3kQ2aBc9xYzQ": false} {
		if maskedQuery(q) != want {
			t.Errorf("maskedQuery(%q) = %v", q, !want)
		}
	}
}

// Same input, same bytes; and the partition does not depend on file order.
func TestDeterministic(t *testing.T) {
	evs, _ := synthEmbedded(embedSpec{dim: 96, sizes: []int{30, 12, 5, 2}, singletons: 200, memberCos: 0.95, seed: 61})
	lex, _ := synthLexical([]int{20, 7, 3}, 100, 62)
	evs = append(evs, lex...)
	var out [2]bytes.Buffer
	for i := range out {
		if err := WriteJSON(&out[i], build(t, evs)); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(out[0].Bytes(), out[1].Bytes()) {
		t.Fatal("two runs on the same events differ")
	}
	shuffled := append([]Event(nil), evs...)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	summary := func(rep *Report) []string {
		var s []string
		for _, c := range rep.Clusters {
			qs := []string{}
			for _, q := range c.Queries {
				qs = append(qs, q.Key)
			}
			sort.Strings(qs)
			s = append(s, itoa(c.Count)+":"+c.Representative+":"+c.Diagnosis.Mode+":"+qs[0])
		}
		sort.Strings(s)
		return s
	}
	if a, b := summary(build(t, evs)), summary(build(t, shuffled)); !reflect.DeepEqual(a, b) {
		t.Fatal("clusters depend on the order of the events")
	}
}

func TestRankingTies(t *testing.T) {
	at := func(h int) Event {
		return Event{Kind: KindRefusalHard, Time: t0.Add(timeHours(h)), HasTime: true}
	}
	mk := func(q string, h int) Event { e := at(h); e.Query = q; return e }
	evs := []Event{
		mk("zebra crossing rules", 1), mk("zebra crossing rules", 2), // count 2, last 2h
		mk("alpha release notes", 5),                                  // count 1, last 5h
		mk("beta release schedule", 5),                                // count 1, last 5h: ties, then by text
		mk("gamma ray burst", 9),                                      // count 1, most recent
		mk("delta sync", 9), mk("delta sync", 1), mk("delta sync", 3), // count 3
	}
	rep := build(t, evs)
	var got []string
	for _, c := range rep.Clusters {
		got = append(got, c.Representative)
	}
	want := []string{"delta sync", "zebra crossing rules", "gamma ray burst", "alpha release notes", "beta release schedule"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("order %q, want %q", got, want)
	}
	if c := rep.Clusters[0]; c.FirstSeen != "2026-03-02T10:00:00Z" || c.LastSeen != "2026-03-02T18:00:00Z" {
		t.Errorf("first/last seen %s %s", c.FirstSeen, c.LastSeen)
	}
}

// The representative is the most asked wording; among equals the most
// central one.
func TestRepresentative(t *testing.T) {
	evs := []Event{
		{Kind: KindRefusalHard, Query: "reset password email"},
		{Kind: KindRefusalHard, Query: "reset my password"},
		{Kind: KindRefusalHard, Query: "Reset my password"},
		{Kind: KindRefusalHard, Query: "password reset link email expired"},
	}
	rep := build(t, evs)
	if len(rep.Clusters) != 1 {
		t.Fatalf("%d clusters", len(rep.Clusters))
	}
	if c := rep.Clusters[0]; c.Representative != "reset my password" || c.DistinctQueries != 3 || len(c.Examples) != 2 {
		t.Errorf("representative %q, distinct %d, examples %q", c.Representative, c.DistinctQueries, c.Examples)
	}

	r := rand.New(rand.NewPCG(71, 72))
	centre := unitVec(r, 64)
	var evs2 []Event
	for i := 0; i < 6; i++ {
		evs2 = append(evs2, Event{Kind: KindRefusalHard, Query: "wording " + itoa(i), QueryEmbedding: around(r, centre, 0.97)})
	}
	evs2 = append(evs2, Event{Kind: KindRefusalHard, Query: "the centre itself", QueryEmbedding: centre})
	rep = build(t, evs2)
	if len(rep.Clusters) != 1 || rep.Clusters[0].Representative != "the centre itself" {
		t.Errorf("representative %q of %d clusters, want the central wording", rep.Clusters[0].Representative, len(rep.Clusters))
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, mut := range []func(*Options){
		func(o *Options) { o.Cosine = 0 },
		func(o *Options) { o.Cosine = 1.2 },
		func(o *Options) { o.Jaccard = -1 },
		func(o *Options) { o.Thresholds.Floor = 2 },
		func(o *Options) { o.Thresholds.CoverageLow = 0.9 },
	} {
		o := DefaultOptions()
		mut(&o)
		if _, err := Build(nil, o); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
	rep, err := Build(nil, DefaultOptions())
	if err != nil || len(rep.Clusters) != 0 {
		t.Errorf("empty input: %v %v", rep, err)
	}
}
