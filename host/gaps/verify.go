package gaps

import (
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
)

// Verification (the support-agent article): after content is added, re-run
// each cluster's real past queries against the current corpus and count how
// many now clear the floor. The retrieval file holds, one per line, a gate
// request (query and chunks) for past queries, retrieved from the new corpus;
// lines are matched to cluster queries by their normalised query text.

// Retrieval is one line of the retrieval file.
type Retrieval struct {
	Query   string
	Key     string // normQuery(Query)
	Request []byte // the line as given: a gate request
	Line    int
	// Scores of every chunk (chunks and results_per_query), for ScoreJudge.
	Chunks []ChunkScores
	// ScoresErr is why Chunks could not be read. It is not a read error:
	// the gate judge validates the request itself and names the field more
	// precisely (chunks[2].scores.vector); ScoreJudge reports it.
	ScoresErr error
}

// ChunkScores are the scores of one retrieved chunk that ScoreJudge reads.
// Pointers tell absent from a real 0.0.
type ChunkScores struct {
	Vector  *float64 `json:"vector"`
	Rerank  *float64 `json:"rerank"`
	Boosted *float64 `json:"boosted"`
}

type rawQuery struct {
	Query *string `json:"query"`
}

type rawRetrieval struct {
	Chunks []struct {
		Scores ChunkScores `json:"scores"`
	} `json:"chunks"`
	ResultsPerQuery [][]struct {
		Scores ChunkScores `json:"scores"`
	} `json:"results_per_query"`
}

// ReadRetrievals reads a retrieval file. Only the query is required here: the
// judge validates the rest (the gate names any bad field).
func ReadRetrievals(r io.Reader, opt ReadOptions) ([]Retrieval, ReadStats, error) {
	var st ReadStats
	var out []Retrieval
	err := readJSONL(r, opt, &st, func(n int, line []byte) *LineError {
		rt, lerr := decodeRetrieval(line, n)
		if lerr == nil {
			out = append(out, rt)
		}
		return lerr
	})
	st.Events = len(out)
	return out, st, err
}

func decodeRetrieval(line []byte, n int) (Retrieval, *LineError) {
	var q rawQuery
	if err := json.Unmarshal(line, &q); err != nil {
		return Retrieval{}, jsonLineError(n, err)
	}
	if q.Query == nil || strings.TrimSpace(*q.Query) == "" {
		return Retrieval{}, &LineError{Line: n, Field: "query", Msg: "missing or empty"}
	}
	rt := Retrieval{Query: *q.Query, Key: normQuery(*q.Query), Request: append([]byte(nil), line...), Line: n}
	var raw rawRetrieval
	if err := json.Unmarshal(line, &raw); err != nil {
		rt.ScoresErr = jsonLineError(n, err)
	}
	for _, c := range raw.Chunks {
		rt.Chunks = append(rt.Chunks, c.Scores)
	}
	for _, list := range raw.ResultsPerQuery {
		for _, c := range list {
			rt.Chunks = append(rt.Chunks, c.Scores)
		}
	}
	return rt, nil
}

// Outcome is what a judge says about one re-run query.
type Outcome struct {
	// Cleared: the evidence now reaches the model (the policy injects or
	// caveats; for ScoreJudge, the best score is at or over the floor).
	Cleared bool
	// Refused: the policy still refuses outright.
	Refused bool
	Action  string // the gate's action, or "" for ScoreJudge
	Best    float64
	HasBest bool
}

// Judge decides one re-run query. GateJudge (package gaps/gatejudge) runs the
// real gate on the request; ScoreJudge checks the retrieval scores alone.
type Judge interface {
	Name() string
	Judge(rt *Retrieval) (Outcome, error)
}

// ScoreJudge checks the floor on the retrieval scores directly: a query
// clears when some chunk's score (rerank, else boosted, else vector: the
// [0,1] scores the retrieval score prefers in that order) is at or over Floor. It is the
// seed's own check ("count how many now clear RETRIEVAL_MIN_SCORE") without
// the rest of the policy; BM25 is unbounded and is not read.
type ScoreJudge struct{ Floor float64 }

func (j ScoreJudge) Name() string { return "scores (floor " + ftoa(j.Floor) + ")" }

func (j ScoreJudge) Judge(rt *Retrieval) (Outcome, error) {
	var o Outcome
	if rt.ScoresErr != nil {
		return o, rt.ScoresErr
	}
	for _, c := range rt.Chunks {
		var s *float64
		switch {
		case c.Rerank != nil:
			s = c.Rerank
		case c.Boosted != nil:
			s = c.Boosted
		case c.Vector != nil:
			s = c.Vector
		}
		if s != nil && (!o.HasBest || *s > o.Best) {
			o.Best, o.HasBest = *s, true
		}
	}
	o.Cleared = o.HasBest && o.Best >= j.Floor
	o.Refused = !o.Cleared
	o.Best = round6(o.Best)
	return o, nil
}

// VerifyOptions control verification.
type VerifyOptions struct {
	// SkipErrors counts a query the judge rejects (a bad request line) as an
	// error instead of stopping.
	SkipErrors bool
	// MaxFailing bounds the still-failing queries listed per cluster.
	MaxFailing int
}

// VerifyCounts count distinct queries (and the events that asked them).
type VerifyCounts struct {
	Queries    int `json:"queries"`     // distinct past queries
	Rerun      int `json:"rerun"`       // with a line in the retrieval file
	Cleared    int `json:"cleared"`     // now clear the floor
	NotRefused int `json:"not_refused"` // no longer refused outright
	Failing    int `json:"still_failing"`
	Missing    int `json:"missing"` // no retrieval line: not re-run
	Errors     int `json:"errors"`  // rejected by the judge (SkipErrors)
	// Events and EventsCleared weigh queries by how often they were asked:
	// how many past askers would now get an answer.
	Events        int `json:"events"`
	EventsCleared int `json:"events_cleared"`
}

func (c *VerifyCounts) add(o *VerifyCounts) {
	c.Queries += o.Queries
	c.Rerun += o.Rerun
	c.Cleared += o.Cleared
	c.NotRefused += o.NotRefused
	c.Failing += o.Failing
	c.Missing += o.Missing
	c.Errors += o.Errors
	c.Events += o.Events
	c.EventsCleared += o.EventsCleared
}

// ClusterVerify is one cluster's verification.
type ClusterVerify struct {
	Rank           int          `json:"rank"`
	ID             string       `json:"id"`
	Representative string       `json:"representative"`
	FailureMode    string       `json:"failure_mode"`
	Counts         VerifyCounts `json:"counts"`
	// StillFailing lists re-run queries that still do not clear, with the
	// line of their retrieval, so they can be looked at.
	StillFailing []FailingQuery `json:"still_failing"`
	ErrorsSeen   []string       `json:"errors,omitempty"`
}

// FailingQuery is a re-run query that still does not clear.
type FailingQuery struct {
	Query  string   `json:"query"`
	Line   int      `json:"line"`
	Action string   `json:"action,omitempty"`
	Best   *float64 `json:"best_score"`
}

// VerifyResult is the whole verification.
type VerifyResult struct {
	Judge    string          `json:"judge"`
	Totals   VerifyCounts    `json:"totals"`
	Clusters []ClusterVerify `json:"clusters"`
	// Unmatched counts retrieval lines whose query is in no cluster shown,
	// Duplicates lines whose query repeats an earlier line (the first wins).
	Unmatched  int `json:"unmatched_retrievals"`
	Duplicates int `json:"duplicate_retrievals"`
}

// Verify re-runs every distinct query of the report's clusters that has a
// retrieval line through the judge.
func Verify(rep *Report, rts []Retrieval, j Judge, opt VerifyOptions) (*VerifyResult, error) {
	if opt.MaxFailing == 0 {
		opt.MaxFailing = 5
	}
	res := &VerifyResult{Judge: j.Name(), Clusters: []ClusterVerify{}}
	byKey := make(map[string]int, len(rts))
	for i := range rts {
		if _, dup := byKey[rts[i].Key]; dup {
			res.Duplicates++
			continue
		}
		byKey[rts[i].Key] = i
	}
	used := make(map[string]bool)
	for ci := range rep.Clusters {
		c := &rep.Clusters[ci]
		cv := ClusterVerify{Rank: c.Rank, ID: c.ID, Representative: c.Representative, FailureMode: c.Diagnosis.Mode, StillFailing: []FailingQuery{}}
		n := &cv.Counts
		for _, q := range c.Queries {
			n.Queries++
			n.Events += q.Count
			ri, ok := byKey[q.Key]
			if !ok {
				n.Missing++
				continue
			}
			used[q.Key] = true
			rt := &rts[ri]
			o, err := j.Judge(rt)
			if err != nil {
				msg := "retrieval line " + strconv.Itoa(rt.Line) + ": " + err.Error()
				if !opt.SkipErrors {
					return nil, errors.New(msg)
				}
				n.Errors++
				if len(cv.ErrorsSeen) < opt.MaxFailing {
					cv.ErrorsSeen = append(cv.ErrorsSeen, msg)
				}
				continue
			}
			n.Rerun++
			if !o.Refused {
				n.NotRefused++
			}
			if o.Cleared {
				n.Cleared++
				n.EventsCleared += q.Count
				continue
			}
			n.Failing++
			if len(cv.StillFailing) < opt.MaxFailing {
				f := FailingQuery{Query: q.Query, Line: rt.Line, Action: o.Action}
				if o.HasBest {
					b := round6(o.Best)
					f.Best = &b
				}
				cv.StillFailing = append(cv.StillFailing, f)
			}
		}
		res.Totals.add(n)
		res.Clusters = append(res.Clusters, cv)
	}
	for k := range byKey {
		if !used[k] {
			res.Unmatched++
		}
	}
	return res, nil
}

// AllCleared says whether every re-run query cleared and nothing was
// missing: the condition a CI regression gate (gaps verify --strict) wants.
func (r *VerifyResult) AllCleared() bool {
	return r.Totals.Failing == 0 && r.Totals.Errors == 0 && r.Totals.Missing == 0
}

// WriteVerifyJSON writes the verification as indented JSON.
func WriteVerifyJSON(w io.Writer, r *VerifyResult) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// WriteVerifyMarkdown writes the verification as a table.
func WriteVerifyMarkdown(w io.Writer, r *VerifyResult) error {
	var b strings.Builder
	t := &r.Totals
	b.WriteString("# Knowledge-gap verification\n\n")
	b.WriteString("Judge: " + r.Judge + ". " + itoa(t.Rerun) + " of " + itoa(t.Queries) + " past queries re-run; " +
		itoa(t.Cleared) + " now clear (" + itoa(t.EventsCleared) + " of " + itoa(t.Events) + " events), " +
		itoa(t.NotRefused) + " are no longer refused, " + itoa(t.Failing) + " still fail, " + itoa(t.Missing) + " have no retrieval line")
	if t.Errors > 0 {
		b.WriteString(", " + itoa(t.Errors) + " were rejected")
	}
	b.WriteString(".\n\n")
	if len(r.Clusters) > 0 {
		b.WriteString("| # | Gap | Failure mode | Queries | Re-run | Cleared | Not refused | Still failing | Missing |\n")
		b.WriteString("|---:|---|---|---:|---:|---:|---:|---:|---:|\n")
		for i := range r.Clusters {
			c := &r.Clusters[i]
			n := &c.Counts
			b.WriteString("| " + itoa(c.Rank) + " | " + cell(c.Representative) + " | " + c.FailureMode + " | " + itoa(n.Queries) + " | " +
				itoa(n.Rerun) + " | " + itoa(n.Cleared) + " | " + itoa(n.NotRefused) + " | " + itoa(n.Failing) + " | " + itoa(n.Missing) + " |\n")
		}
		for i := range r.Clusters {
			c := &r.Clusters[i]
			if len(c.StillFailing) == 0 && len(c.ErrorsSeen) == 0 {
				continue
			}
			b.WriteString("\n## " + itoa(c.Rank) + ". " + cell(c.Representative) + ": still failing\n\n")
			for _, f := range c.StillFailing {
				b.WriteString("- " + cell(f.Query) + " (retrieval line " + itoa(f.Line))
				if f.Action != "" {
					b.WriteString(", action " + f.Action)
				}
				if f.Best != nil {
					b.WriteString(", best score " + ftoa(*f.Best))
				}
				b.WriteString(")\n")
			}
			for _, e := range c.ErrorsSeen {
				b.WriteString("- error: " + e + "\n")
			}
		}
	}
	if r.Unmatched > 0 || r.Duplicates > 0 {
		b.WriteString("\n" + itoa(r.Unmatched) + " retrieval lines matched no cluster query; " + itoa(r.Duplicates) + " repeated an earlier query.\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
