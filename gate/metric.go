package gate

import (
	"strconv"

	"github.com/ctxgate/ctxgate/gate/internal/jsonread"
	"github.com/ctxgate/ctxgate/gate/wire"
)

// Score conventions: a request states how its vector scores were measured
// (vector_metric) and what its rerank scores are (rerank_scale), or the
// engine's defaults (Defaults, set by the host) apply. The engine turns
// every vector score into a similarity, higher meaning closer, so that
// every signal reads one convention whatever the vector store returned:
//
//	cosine            s            cosine_distance  1 - d
//	l2                1 - d²/2     l2_squared       1 - d/2
//	dot               s            negative_dot     -s
//
// The cosine family (cosine, cosine_distance, l2, l2_squared) gives the
// cosine exactly for unit-length embeddings, so it has cosine levels: the
// signals that read a level (max_similarity, evidence's vector weight,
// retrieval's vector fallback, the outcome's vector) read it clamped to
// [0,1], as always. dot and negative_dot give unbounded similarities, and
// so does l2 above 2 (l2_squared above 4), which unit-length embeddings
// never give: their scores still order chunks and count as a semantic
// score where only presence or rank matters, but the level-reading
// signals take them as absent.

// VectorMetric and RerankScale are the request's score conventions
// (gate/wire).
type (
	VectorMetric = wire.VectorMetric
	RerankScale  = wire.RerankScale
)

// The metrics and scales (wire.VectorMetric, wire.RerankScale).
const (
	MetricCosine         = wire.MetricCosine
	MetricDot            = wire.MetricDot
	MetricL2             = wire.MetricL2
	MetricL2Squared      = wire.MetricL2Squared
	MetricCosineDistance = wire.MetricCosineDistance
	MetricNegativeDot    = wire.MetricNegativeDot

	RerankProbability = wire.RerankProbability
	RerankLogit       = wire.RerankLogit
)

// The warnings' codes (decision warnings[].code).
const (
	WarnLooksLikeDistances    = "scores_look_like_distances"
	WarnLooksLikeSimilarities = "scores_look_like_similarities"
	WarnNotUnitLength         = "embeddings_not_unit_length"
)

// Defaults are the score conventions an engine applies to a request that
// states none: the host's configuration (serve's vector_metric, the
// module's config keys, the Envoy filter's). "" keeps the gate's own
// (cosine; rerank_scale by value).
type Defaults struct {
	VectorMetric VectorMetric
	RerankScale  RerankScale
}

// SetDefaults sets the conventions e applies to requests that state none.
// A name the gate does not know is a bad_field error naming vector_metric
// or rerank_scale, and so is a metric without cosine levels when e's
// policy decides confidence by one.
func (e *Engine) SetDefaults(d Defaults) error {
	if d.VectorMetric != "" {
		m, ok := wire.ParseVectorMetric(string(d.VectorMetric))
		if !ok {
			return errorf(CodeBadField, "vector_metric", unknownName(metricNames, string(d.VectorMetric)))
		}
		if !hasLevels(m) && e.levelSignal != "" && !e.levelSignalRetrieval {
			return errorf(CodeBadField, "vector_metric", e.noLevelsMessage(m, false))
		}
		d.VectorMetric = m
	}
	if d.RerankScale != "" {
		r, ok := wire.ParseRerankScale(string(d.RerankScale))
		if !ok {
			return errorf(CodeBadField, "rerank_scale", unknownName(scaleNames, string(d.RerankScale)))
		}
		d.RerankScale = r
	}
	e.defaults = d
	return nil
}

// Defaults returns the conventions e applies to requests that state none.
func (e *Engine) Defaults() Defaults { return e.defaults }

// The names as errors list them.
const (
	metricNames = "cosine, dot, l2, l2_squared, cosine_distance, negative_dot"
	scaleNames  = "probability, logit"
)

// unknownName is the message for a name not among names.
func unknownName(names, got string) string {
	if len(got) > 64 {
		got = got[:64] + "..."
	}
	return "must be one of " + names + `; got "` + got + `"`
}

// hasLevels reports whether metric m's similarities are cosines (for
// unit-length embeddings, which l2 above 2 shows a request's are not).
func hasLevels(m VectorMetric) bool { return m != MetricDot && m != MetricNegativeDot }

// isDistance reports whether metric m is lower-is-closer.
func isDistance(m VectorMetric) bool {
	return m != MetricCosine && m != MetricDot
}

// similarity is v, measured by metric m, as a similarity (higher is
// closer): exact cosines for unit-length embeddings in the cosine family.
// -0 becomes 0, so a decision never writes "-0".
func similarity(m VectorMetric, v float64) float64 {
	switch m {
	case MetricCosineDistance:
		v = 1 - v
	case MetricL2:
		v = 1 - float64(v*v)/2 // float64(): no fused multiply-add, the same bits everywhere
	case MetricL2Squared:
		v = 1 - v/2
	case MetricNegativeDot:
		v = -v
	}
	if v == 0 {
		return 0
	}
	return v
}

// vectorSlack is how far past its bounds a score of the cosine family may
// be and still count as in range: normalizing and dotting float32 vectors
// routinely gives a cosine of 1.0000000002.
const vectorSlack = 1e-9

// inRange reports whether v is a value metric m can give for unit-length
// embeddings, or (l2, l2_squared) for any embeddings.
func inRange(m VectorMetric, v float64) bool {
	switch m {
	case MetricCosine:
		return v >= -1-vectorSlack && v <= 1+vectorSlack
	case MetricCosineDistance:
		return v >= -vectorSlack && v <= 2+vectorSlack
	case MetricL2, MetricL2Squared:
		return v >= -vectorSlack
	}
	return true
}

// unitBound is the most an l2 (l2_squared) distance between unit-length
// embeddings can be; above it a request's embeddings are not unit length.
func unitBound(m VectorMetric) float64 {
	if m == MetricL2 {
		return 2 + vectorSlack
	}
	return 4 + vectorSlack
}

// metricNoun names what metric m's values are, for messages.
func metricNoun(m VectorMetric) string {
	switch m {
	case MetricCosineDistance:
		return "a cosine distance"
	case MetricL2:
		return "an l2 distance"
	case MetricL2Squared:
		return "a squared l2 distance"
	}
	return "a cosine similarity"
}

// fittingMetric names the metric a value out of the stated metric's range
// would fit, by the value alone (TestFittingMetric): below -1 only a
// negated inner product (pgvector <#>) goes; in [-1, 0) a cosine or that;
// in (1, 2] a distance of unit-length embeddings; in (2, 4] a squared l2
// distance or an inner product; above 4 an inner product.
func fittingMetric(v float64) string {
	switch {
	case v < -1:
		return "negative_dot"
	case v < 0:
		return "cosine or negative_dot"
	case v <= 2:
		return "cosine_distance, l2 or l2_squared, as the store measures it"
	case v <= 4:
		return "l2_squared or dot"
	}
	return "dot"
}

// formatScore writes a score for a message: the shortest exact form.
func formatScore(dst []byte, v float64) []byte { return strconv.AppendFloat(dst, v, 'g', -1, 64) }

// scoreScale is one decision's score conventions, resolved (checkScores).
type scoreScale struct {
	metric VectorMetric
	// levels: the similarities are cosines (checkScores).
	levels bool
	// unitOver is the first l2 score past unitBound, when one is (it took
	// the levels away); unitAt names it.
	unitOver float64
	unitAt   string
	scale    RerankScale // "" for the rule by value
}

// checkScores resolves req's score conventions into e.scale and checks
// every vector and rerank score against them, naming the field: a value
// the metric cannot give is an error, not a silently wrong gate.
func (e *Engine) checkScores(req *Request) error {
	sc := &e.scale
	*sc = scoreScale{metric: req.VectorMetric, scale: req.RerankScale}
	if sc.metric == "" {
		sc.metric = e.defaults.VectorMetric
	}
	if sc.metric == "" {
		sc.metric = MetricCosine
	} else if m, ok := wire.ParseVectorMetric(string(sc.metric)); ok {
		sc.metric = m
	} else {
		return errorf(CodeBadField, "vector_metric", unknownName(metricNames, string(sc.metric)))
	}
	if sc.scale == "" {
		sc.scale = e.defaults.RerankScale
	} else if r, ok := wire.ParseRerankScale(string(sc.scale)); ok {
		sc.scale = r
	} else {
		return errorf(CodeBadField, "rerank_scale", unknownName(scaleNames, string(sc.scale)))
	}
	sc.levels = hasLevels(sc.metric)
	if err := e.checkList(req.Chunks, "chunks", -1); err != nil {
		return err
	}
	for l, list := range req.ResultsPerQuery {
		if err := e.checkList(list, "results_per_query", l); err != nil {
			return err
		}
	}
	if !sc.levels && e.levelSignal != "" {
		if !e.levelSignalRetrieval || vectorFallback(req) {
			return errorf(CodeBadField, "vector_metric", e.noLevelsMessage(sc.metric, sc.unitAt != ""))
		}
	}
	return nil
}

// checkList checks one chunk list's vector and rerank scores (list l of
// name, or name itself when l < 0) and notes a first l2 score past the
// unit-length bound.
func (e *Engine) checkList(list []Chunk, name string, l int) error {
	sc := &e.scale
	for i := range list {
		s := &list[i].Scores
		if s.HasVector {
			if !inRange(sc.metric, s.Vector) {
				b := formatScore(e.msg(), s.Vector)
				b = append(b, " is not "...)
				b = append(b, metricNoun(sc.metric)...)
				b = append(b, "; set vector_metric to "...)
				b = append(b, fittingMetric(s.Vector)...)
				return errorf(CodeBadField, chunkPath(name, l, i)+".scores.vector", string(b))
			}
			if (sc.metric == MetricL2 || sc.metric == MetricL2Squared) && s.Vector > unitBound(sc.metric) && sc.unitAt == "" {
				sc.levels, sc.unitOver, sc.unitAt = false, s.Vector, chunkPath(name, l, i)
			}
		}
		if s.HasRerank && sc.scale == RerankProbability && !unit(s.Rerank) {
			b := formatScore(e.msg(), s.Rerank)
			b = append(b, " is not a probability; set rerank_scale to logit"...)
			return errorf(CodeBadField, chunkPath(name, l, i)+".scores.rerank", string(b))
		}
	}
	return nil
}

// chunkPath is chunk i of list l of name ("chunks[3]",
// "results_per_query[1][3]"), or of name itself when l < 0.
func chunkPath(name string, l, i int) string {
	if l >= 0 {
		name = jsonread.Idx(name, l, "")
	}
	return jsonread.Idx(name, i, "")
}

// vectorFallback reports whether some chunk of req takes its retrieval
// score from its vector score (it has no rerank, boosted or rrf score).
func vectorFallback(req *Request) bool {
	lists := req.ResultsPerQuery
	for l := -1; l < len(lists); l++ {
		list := req.Chunks
		if l >= 0 {
			list = lists[l]
		}
		for i := range list {
			s := &list[i].Scores
			if s.HasVector && !s.HasRerank && !s.HasBoosted && !s.HasRRF {
				return true
			}
		}
	}
	return false
}

// confidenceLevelSignal finds the signal by which p's confidence reads a
// cosine level, if any: max_similarity, or a retrieval metric (which reads
// one only through a chunk's vector fallback: retrieval set).
func confidenceLevelSignal(p *Policy) (name string, retrieval bool) {
	c := &p.Confidence
	reads := func(s string) bool {
		if s == SigMaxSimilarity {
			return true
		}
		switch s {
		case SigTopScore, SigScoreGap, SigScoreSpread, SigConsensus, SigRetrievalConf:
			return true
		}
		return false
	}
	if c.Signal != "" {
		if reads(c.Signal) {
			return c.Signal, c.Signal != SigMaxSimilarity
		}
		return "", false
	}
	for _, t := range c.Terms {
		if t.Weight != 0 && t.Signal == SigMaxSimilarity {
			return t.Signal, false
		}
	}
	for _, t := range c.Terms {
		if t.Weight != 0 && reads(t.Signal) {
			return t.Signal, true
		}
	}
	return "", false
}

// noLevelsMessage says why metric m (or l2 past the unit bound: unitOver)
// cannot serve e's policy.
func (e *Engine) noLevelsMessage(m VectorMetric, unitOver bool) string {
	b := append(e.msg(), m...)
	if unitOver {
		b = append(b, " scores above "...)
		b = formatScore(b, unitBound(m)-vectorSlack)
		b = append(b, " (embeddings not of unit length)"...)
	} else {
		b = append(b, " scores"...)
	}
	b = append(b, ` have no cosine levels, and policy "`...)
	b = append(b, e.ref.Name...)
	b = append(b, `" decides confidence by `...)
	b = append(b, e.levelSignal...)
	if e.levelSignalRetrieval {
		b = append(b, ", which reads them where a chunk has no rerank, boosted or rrf score"...)
	} else {
		b = append(b, ", which reads them"...)
	}
	b = append(b, ": give cosine similarities or distances of unit-length embeddings, or use a policy that does not decide by cosine levels"...)
	return string(b)
}

// scoreWarnings adds the decision's warnings about its vector scores:
// l2 past the unit bound, and a list in retriever order whose scores run
// the wrong way for the stated metric.
func (e *Engine) scoreWarnings(req *Request) {
	sc := &e.scale
	if sc.unitAt != "" {
		b := append(e.msg(), sc.metric...)
		b = append(b, " score "...)
		b = formatScore(b, sc.unitOver)
		b = append(b, " at "...)
		b = append(b, sc.unitAt...)
		b = append(b, " is above "...)
		b = formatScore(b, unitBound(sc.metric)-vectorSlack)
		b = append(b, ", so the embeddings are not unit length: the vector scores order the chunks, but no signal reads them as cosine levels"...)
		e.a.warn(WarnNotUnitLength, e.done(b))
	}
	if e.runsBackwards(req.Chunks, "chunks", -1) {
		return
	}
	for l, list := range req.ResultsPerQuery {
		if e.runsBackwards(list, "results_per_query", l) {
			return
		}
	}
}

// runsBackwards warns, and reports true, when a list given in retriever
// order (closest first) has vector scores that run the wrong way for the
// stated metric: similarities that rise down the list, or distances that
// fall. The rule (TestBackwardsRule) takes the chunks with a vector score
// in list order: at least three, at least two rises, rises at least twice
// the falls, and the first closer than the last. A list whose chunks carry
// rerank or rrf scores is in the reranker's or the fusion's order, not the
// vector retriever's, and is not read. Position is never a feature of
// confidence: this is only a warning.
func (e *Engine) runsBackwards(list []Chunk, name string, l int) bool {
	n, rises, falls := 0, 0, 0
	var first, last, prev float64
	for i := range list {
		s := &list[i].Scores
		if s.HasRerank || s.HasRRF {
			return false
		}
		if !s.HasVector {
			continue
		}
		v := similarity(e.scale.metric, s.Vector)
		if n == 0 {
			first = s.Vector
		} else if v > prev {
			rises++
		} else if v < prev {
			falls++
		}
		prev, last = v, s.Vector
		n++
	}
	if n < 3 || rises < 2 || rises < 2*falls || !(similarity(e.scale.metric, first) < prev) {
		return false
	}
	m := e.scale.metric
	b := append(e.msg(), "vector scores "...)
	code, looks, fits := WarnLooksLikeDistances, "distances", "cosine_distance, l2 or l2_squared"
	if isDistance(m) {
		code, looks, fits = WarnLooksLikeSimilarities, "similarities", "cosine"
		b = append(b, "fall"...)
		if m == MetricNegativeDot || first > 1 || first < -1 || last > 1 || last < -1 {
			fits = "dot"
		}
	} else {
		b = append(b, "rise"...)
		if first <= 0 && last <= 0 {
			fits = "negative_dot"
		} else if m == MetricDot && (first > 2 || last > 2) {
			fits = "l2_squared or l2"
		}
	}
	b = append(b, " down "...)
	if l >= 0 {
		b = append(b, jsonread.Idx(name, l, "")...)
	} else {
		b = append(b, name...)
	}
	b = append(b, " ("...)
	b = formatScore(b, first)
	b = append(b, " first, "...)
	b = formatScore(b, last)
	b = append(b, " last), as "...)
	b = append(b, looks...)
	b = append(b, " do in retriever order, but vector_metric is "...)
	b = append(b, m...)
	b = append(b, ": if they are "...)
	b = append(b, looks...)
	b = append(b, ", set vector_metric to "...)
	b = append(b, fits...)
	e.a.warn(code, e.done(b))
	return true
}
