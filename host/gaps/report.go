package gaps

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"sort"
	"time"
)

// Cluster is one knowledge gap: the events that asked the same missing
// question, however phrased.
type Cluster struct {
	Rank int `json:"rank"`
	// ID is derived from the representative query, so the same gap keeps its
	// ID from one week's report to the next while its rank moves.
	ID             string       `json:"id"`
	Count          int          `json:"count"`
	SourceCounts   SourceCounts `json:"source_counts"`
	Representative string       `json:"representative"`
	Examples       []string     `json:"examples"`
	// DistinctQueries is how many differently worded questions the cluster
	// holds (after case and whitespace folding).
	DistinctQueries int `json:"distinct_queries"`
	// FirstSeen and LastSeen are RFC 3339 with the log's full precision,
	// for machines; the _text forms are to the minute, for people
	// ("2026-03-02 22:58 UTC").
	FirstSeen     string    `json:"first_seen,omitempty"`
	LastSeen      string    `json:"last_seen,omitempty"`
	FirstSeenText string    `json:"first_seen_text,omitempty"`
	LastSeenText  string    `json:"last_seen_text,omitempty"`
	Path          string    `json:"path"` // embedding | lexical | mixed
	Policies      []string  `json:"policies"`
	Diagnosis     Diagnosis `json:"diagnosis"`
	// Queries are every distinct query with its count, most frequent first:
	// what verify re-runs.
	Queries []QueryCount `json:"-"`
	// Events index the input slice.
	Events []int `json:"-"`

	last     time.Time
	firstIdx int32
	hist     map[int64]int32 // a streamed gap's events per trend bucket
}

// QueryCount is one distinct query of a cluster.
type QueryCount struct {
	Query string
	Key   string // normQuery(Query): how verify matches retrieval lines
	Count int
}

// Report is the ranked backlog.
type Report struct {
	Options ReportOptions `json:"options"`
	Stats   Stats         `json:"stats"`
	// FirstSeen and LastSeen span every event with a time (clusters left
	// out by Filter included), in the forms Cluster uses.
	FirstSeen     string    `json:"first_seen,omitempty"`
	LastSeen      string    `json:"last_seen,omitempty"`
	FirstSeenText string    `json:"first_seen_text,omitempty"`
	LastSeenText  string    `json:"last_seen_text,omitempty"`
	Clusters      []Cluster `json:"clusters"`
	// Notes say what of the input was left out (malformed lines skipped),
	// in words; the Markdown and HTML reports show them too.
	Notes []string `json:"notes,omitempty"`

	timeline *timeline // a streamed report's event times; nil for Build's
}

// ReportOptions echoes the thresholds a report was made with.
type ReportOptions struct {
	Cosine     float64    `json:"cosine"`
	Jaccard    float64    `json:"jaccard"`
	Chars      float64    `json:"chars"`
	Guard      float64    `json:"guard"`
	MinCount   int        `json:"min_count"`
	Thresholds Thresholds `json:"thresholds"`
}

// Build clusters events, diagnoses and ranks the clusters. It returns every
// cluster; Report.Filter trims by count.
func Build(events []Event, opt Options) (*Report, error) {
	if err := opt.validate(); err != nil {
		return nil, err
	}
	rep := &Report{Options: reportOptions(&opt)}
	st := &rep.Stats
	st.Events = len(events)
	units := buildUnits(events)
	st.DistinctQueries = len(units)
	comps := components(units, &opt, st, nil)
	st.Clusters = len(comps)
	rep.Clusters = make([]Cluster, 0, len(comps))
	for _, comp := range comps {
		rep.Clusters = append(rep.Clusters, makeCluster(events, units, comp, &opt))
	}
	rank(rep.Clusters)
	var first, last time.Time
	for i := range events {
		if t := events[i].Time; events[i].HasTime {
			if first.IsZero() || t.Before(first) {
				first = t
			}
			if t.After(last) {
				last = t
			}
		}
	}
	if !first.IsZero() {
		rep.FirstSeen, rep.LastSeen = first.UTC().Format(time.RFC3339Nano), last.UTC().Format(time.RFC3339Nano)
		rep.FirstSeenText, rep.LastSeenText = ReadableTime(first), ReadableTime(last)
	}
	return rep, nil
}

func reportOptions(o *Options) ReportOptions {
	return ReportOptions{Cosine: o.Cosine, Jaccard: o.Jaccard, Chars: o.Chars, Guard: o.Guard, Thresholds: o.Thresholds}
}

// method says how gaps were formed, in a sentence, for the Markdown and
// HTML reports.
func (o *ReportOptions) method() string {
	return "Questions join a gap at embedding cosine >= " + ftoa(o.Cosine) + "; when one has no embedding, at term Jaccard >= " +
		ftoa(o.Jaccard) + ", character-trigram Jaccard >= " + ftoa(o.Chars) +
		", or when their retrieval returned the same documents and their terms overlap; two groups join only if every pair of their most asked wordings agrees (Jaccard, plus " + ftoa(docBonus) + " for shared documents, >= " +
		ftoa(o.Guard) + ")."
}

// rank orders clusters by count; ties by most recent event, then by
// representative, then by first appearance; and numbers them.
func rank(cs []Cluster) {
	sort.SliceStable(cs, func(i, j int) bool {
		a, b := &cs[i], &cs[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		if !a.last.Equal(b.last) {
			return a.last.After(b.last)
		}
		if a.Representative != b.Representative {
			return a.Representative < b.Representative
		}
		return a.firstIdx < b.firstIdx
	})
	for i := range cs {
		cs[i].Rank = i + 1
	}
}

// Filter drops clusters with fewer than minCount events (ranks are kept).
func (r *Report) Filter(minCount int) {
	r.Options.MinCount = minCount
	k := 0
	for _, c := range r.Clusters {
		if c.Count >= minCount {
			r.Clusters[k] = c
			k++
		}
	}
	r.Clusters = r.Clusters[:k]
}

func makeCluster(events []Event, units []unit, comp []int32, opt *Options) Cluster {
	var c Cluster
	c.firstIdx = math.MaxInt32
	var idx []int32
	embedded, plain := 0, 0
	policies := map[string]bool{}
	var first time.Time
	for _, u := range comp {
		un := &units[u]
		c.Queries = append(c.Queries, QueryCount{Query: un.text, Key: un.key, Count: len(un.events)})
		if un.emb != nil {
			embedded++
		}
		if un.noEmb {
			plain++
		}
		for _, i := range un.events {
			idx = append(idx, i)
			ev := &events[i]
			c.SourceCounts.add(ev.Kind)
			if i < c.firstIdx {
				c.firstIdx = i
			}
			if ev.HasTime {
				if first.IsZero() || ev.Time.Before(first) {
					first = ev.Time
				}
				if ev.Time.After(c.last) {
					c.last = ev.Time
				}
			}
			if p := policyName(ev.Policy); p != "" {
				policies[p] = true
			}
		}
	}
	sort.Slice(idx, func(i, j int) bool { return idx[i] < idx[j] })
	c.Events = make([]int, len(idx))
	for i, x := range idx {
		c.Events[i] = int(x)
	}
	c.Count = len(idx)
	c.DistinctQueries = len(comp)
	c.Path = pathOf(embedded, plain)
	c.setSpan(first)
	c.Policies = make([]string, 0, len(policies))
	for p := range policies {
		c.Policies = append(c.Policies, p)
	}
	sort.Strings(c.Policies)

	c.Queries = sortQueries(c.Queries, centrality(units, comp))
	c.setNames(opt)
	c.Diagnosis = diagnose(events, idx, c.SourceCounts, &opt.Thresholds)
	return c
}

// sortQueries orders a cluster's wordings for the representative: the most
// asked; among equals, the most central (cent, in the same order); then
// the alphabetically first.
func sortQueries(qs []QueryCount, cent []float64) []QueryCount {
	order := make([]int, len(qs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := &qs[order[i]], &qs[order[j]]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		if cent[order[i]] != cent[order[j]] {
			return cent[order[i]] > cent[order[j]]
		}
		return a.Key < b.Key
	})
	sorted := make([]QueryCount, len(order))
	for i, o := range order {
		sorted[i] = qs[o]
	}
	return sorted
}

// pathOf names the clustering path by how many of a cluster's wordings had
// an embedding and how many an event without one.
func pathOf(embedded, plain int) string {
	switch {
	case plain == 0:
		return "embedding"
	case embedded == 0:
		return "lexical"
	}
	return "mixed"
}

// setSpan sets the first and last seen fields from first and c.last.
func (c *Cluster) setSpan(first time.Time) {
	if first.IsZero() {
		return
	}
	c.FirstSeen = first.UTC().Format(time.RFC3339Nano)
	c.LastSeen = c.last.UTC().Format(time.RFC3339Nano)
	c.FirstSeenText, c.LastSeenText = ReadableTime(first), ReadableTime(c.last)
}

// policyName is "name@version", or "" for an event without a policy.
func policyName(p PolicyRef) string {
	if p.Name == "" {
		return ""
	}
	if p.Version != "" {
		return p.Name + "@" + p.Version
	}
	return p.Name
}

// setNames sets the representative (the first of Queries), the ID and the
// examples.
func (c *Cluster) setNames(opt *Options) {
	c.Representative = c.Queries[0].Query
	sum := sha256.Sum256([]byte(c.Queries[0].Key))
	c.ID = hex.EncodeToString(sum[:4])
	c.Examples = []string{}
	for _, q := range c.Queries[1:] {
		if len(c.Examples) >= opt.MaxExamples {
			break
		}
		c.Examples = append(c.Examples, q.Query)
	}
}

// centrality scores each unit of a component: for a unit with an embedding,
// its cosine to the count-weighted centroid of the component's embeddings of
// the same dimension; for one without, the mean share of the cluster's events
// whose query contains each of its terms. It only breaks ties between equally
// frequent wordings, so the two scales need not be comparable.
func centrality(units []unit, comp []int32) []float64 {
	out := make([]float64, len(comp))
	if len(comp) == 1 {
		return out
	}
	centroids := map[int][]float64{}
	df := map[string]int{}
	total := 0
	for _, u := range comp {
		un := &units[u]
		w := float64(un.n)
		total += un.n
		for _, t := range un.terms {
			df[t] += un.n
		}
		if un.emb == nil {
			continue
		}
		c := centroids[len(un.emb)]
		if c == nil {
			c = make([]float64, len(un.emb))
			centroids[len(un.emb)] = c
		}
		inv := w / math.Sqrt(dot(un.emb, un.emb))
		for i, x := range un.emb {
			c[i] += float64(x * inv)
		}
	}
	for i, u := range comp {
		un := &units[u]
		if un.emb != nil {
			c := centroids[len(un.emb)]
			out[i] = dot(un.emb, c) / math.Sqrt(dot(un.emb, un.emb)*dot(c, c))
			continue
		}
		if len(un.terms) == 0 {
			continue
		}
		s := 0.0
		for _, t := range un.terms {
			s += float64(df[t]) / float64(total)
		}
		out[i] = s / float64(len(un.terms))
	}
	return out
}
