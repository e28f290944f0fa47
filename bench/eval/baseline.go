package eval

import "math"

// Baseline is one single-signal AUROC on both halves.
type Baseline struct {
	Set, Level, Signal string
	Tune, Held, All    float64
	NTune, NHeld       int // examples (queries or passages)
	PosTune, PosHeld   int // positives among them
}

// Scored is one example with a score, a label and its half.
type Scored struct {
	Score float64
	Label bool
	Tune  bool
}

// Split computes AUROC on each half of scored examples.
func Split(set, level, signal string, xs []Scored) Baseline {
	b := Baseline{Set: set, Level: level, Signal: signal}
	var st, sh []float64
	var lt, lh []bool
	for _, x := range xs {
		if x.Tune {
			st, lt = append(st, x.Score), append(lt, x.Label)
			b.NTune++
			if x.Label {
				b.PosTune++
			}
		} else {
			sh, lh = append(sh, x.Score), append(lh, x.Label)
			b.NHeld++
			if x.Label {
				b.PosHeld++
			}
		}
	}
	b.Tune, b.Held = AUROC(st, lt), AUROC(sh, lh)
	b.All = AUROC(append(st[:len(st):len(st)], sh...), append(lt[:len(lt):len(lt)], lh...))
	return b
}

// ChunkText is what the lexical signals read of a chunk: title and text.
func ChunkText(title, text string) string {
	if title == "" {
		return text
	}
	return title + " " + text
}

// Baselines are the single-signal AUROCs the data README quotes, which
// validate the harness, and the same signals on the gate's own inputs.
func Baselines(d *DL19, clap []ClapNQ, k int) []Baseline {
	var out []Baseline
	// ClapNQ: max query-term coverage of the passage.
	var xs []Scored
	for _, it := range ClapNQItems(clap) {
		c := it.Req.Chunks[0]
		xs = append(xs, Scored{MaxCoverage(it.Req.Query, []string{ChunkText(c.Title, c.Text)}), it.Answerable, it.Tune})
	}
	out = append(out, Split("clapnq", "query", "max query-term coverage", xs))

	// DL19 pooled over each retriever's own top 20, raw scores (the README's figures).
	for _, r := range []string{BM25, Ada2, TASB, Splade} {
		xs = xs[:0]
		for _, qid := range d.QIDs {
			run := d.Runs[r][qid]
			for i := 0; i < len(run.Hits) && i < 20; i++ {
				h := run.Hits[i]
				xs = append(xs, Scored{h.Score, d.Qrels[qid][h.DocID] >= RelGrade, IsTune("dl19", qid)})
			}
		}
		out = append(out, Split("dl19", "passage (own top 20)", "raw "+r, xs))
	}

	// DL19 on the gate's own chunks: the hybrid top k. An absent score is
	// -Inf here (ranked below the retriever's 100th hit).
	items := d.DL19Items(k)
	for _, sig := range []string{"bm25", "vector", "coverage"} {
		xs = xs[:0]
		for _, it := range items {
			for i, c := range it.Req.Chunks {
				s := math.Inf(-1)
				switch sig {
				case "bm25":
					if c.HasBM25 {
						s = c.BM25
					}
				case "vector":
					if c.HasVector {
						s = c.Vector
					}
				case "coverage":
					s = Coverage(QueryTerms(it.Req.Query), c.Text)
				}
				xs = append(xs, Scored{s, it.ChunkRel[i], it.Tune})
			}
		}
		out = append(out, Split("dl19", "passage (hybrid top k)", "raw "+sig, xs))
	}
	// DL19 query level: the best raw vector score of the request.
	xs = xs[:0]
	for _, it := range items {
		best := math.Inf(-1)
		for _, c := range it.Req.Chunks {
			if c.HasVector && c.Vector > best {
				best = c.Vector
			}
		}
		xs = append(xs, Scored{best, it.Answerable, it.Tune})
	}
	out = append(out, Split("dl19", "query (hybrid top k)", "max raw vector", xs))
	return out
}
