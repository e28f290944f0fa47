package gate

import (
	"math"
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
	k, err := parseMetric(d.VectorMetric, mCosine)
	if err != nil {
		return err
	}
	if _, err := parseScale(d.RerankScale, ""); err != nil {
		return err
	}
	if k >= mDot && e.levelSignal != "" && !e.levelSignalRetrieval {
		return errorf(CodeBadField, "vector_metric", e.noLevelsMessage(k, false))
	}
	e.defaults = d
	return nil
}

// Defaults returns the conventions e applies to requests that state none.
func (e *Engine) Defaults() Defaults { return e.defaults }

// metricKind is a vector metric as the engine works with it: an index into
// wire.VectorMetrics (compared as an integer: under TinyGo a switch on a
// string compares strings, and the conversion runs per chunk). The cosine
// family comes first, then the metrics without levels.
type metricKind uint8

const (
	mCosine metricKind = iota
	mL2
	mL2Squared
	mCosineDistance
	mDot
	mNegativeDot
)

// metricKinds maps wire.VectorMetrics' order to metricKind.
var metricKinds = [len(wire.VectorMetrics)]metricKind{mCosine, mDot, mL2, mL2Squared, mCosineDistance, mNegativeDot}

// metricNouns name what each kind's values are, for errors.
var metricNouns = [...]string{mCosine: "a cosine similarity", mL2: "an l2 distance", mL2Squared: "a squared l2 distance",
	mCosineDistance: "a cosine distance", mDot: "a dot product", mNegativeDot: "a negated dot product"}

// name is k's name on the wire.
func (k metricKind) name() string {
	for i, m := range metricKinds {
		if m == k {
			return string(wire.VectorMetrics[i])
		}
	}
	return ""
}

// parseMetric is the kind named m, def for "", or the error naming
// vector_metric and the values.
func parseMetric(m VectorMetric, def metricKind) (metricKind, error) {
	if m == "" {
		return def, nil
	}
	if i := wire.VectorMetricIndex(string(m)); i >= 0 {
		return metricKinds[i], nil
	}
	return 0, errorf(CodeBadField, "vector_metric", unknownName("cosine, dot, l2, l2_squared, cosine_distance, negative_dot", string(m)))
}

// parseScale is the scale named r, def for "", or the error naming
// rerank_scale and the values.
func parseScale(r, def RerankScale) (RerankScale, error) {
	if r == "" {
		return def, nil
	}
	if r == RerankProbability || r == RerankLogit {
		return r, nil
	}
	return "", errorf(CodeBadField, "rerank_scale", unknownName("probability, logit", string(r)))
}

// unknownName is the message for a name not among names.
func unknownName(names, got string) string {
	if len(got) > 64 {
		got = got[:64] + "..."
	}
	return "must be one of " + names + `; got "` + got + `"`
}

// similarity is v, measured by metric k, as a similarity (higher is
// closer): exact cosines for unit-length embeddings in the cosine family.
// -0 becomes 0, so a decision never writes "-0", and the result is always
// finite (the input is).
func similarity(k metricKind, v float64) float64 {
	switch k {
	case mCosineDistance:
		v = 1 - v
	case mL2:
		v = 1 - float64(v*v)/2 // float64(): no fused multiply-add, the same bits everywhere
		if v < -math.MaxFloat64 {
			v = -math.MaxFloat64 // d past 1.3e154: d² overflows, and no signal may read -Inf
		}
	case mL2Squared:
		v = 1 - v/2
	case mNegativeDot:
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

// unitBound is the most an l2 (l2_squared) distance between unit-length
// embeddings can be: 2 (4). Above it a request's embeddings are not unit
// length.
func unitBound(k metricKind) float64 {
	if k == mL2 {
		return 2
	}
	return 4
}

// inRange reports whether v is a value metric k can give for unit-length
// embeddings, or (l2, l2_squared: >= 0) for any embeddings.
func inRange(k metricKind, v float64) bool {
	switch k {
	case mCosine:
		return v >= -1-vectorSlack && v <= 1+vectorSlack
	case mCosineDistance:
		return v >= -vectorSlack && v <= 2+vectorSlack
	case mL2, mL2Squared:
		return v >= -vectorSlack
	}
	return true
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

// num is a score as a message writes it: its shortest exact decimal.
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// scoreScale is one decision's score conventions, resolved (checkScores).
type scoreScale struct {
	metric metricKind
	// levels: the similarities are cosines (checkScores).
	levels bool
	// unitOver is the first l2 score past unitBound, when one is (it took
	// the levels away): chunk unitAt of list unitList (-1: chunks).
	unitOver         float64
	unitList, unitAt int
	scale            RerankScale // "" for the rule by value
}

// checkScores resolves req's score conventions into e.scale and checks
// every vector and rerank score against them, naming the field: a value
// the metric cannot give is an error, not a silently wrong gate.
func (e *Engine) checkScores(req *Request) error {
	sc := &e.scale
	def, _ := parseMetric(e.defaults.VectorMetric, mCosine)
	k, err := parseMetric(req.VectorMetric, def)
	if err != nil {
		return err
	}
	r, err := parseScale(req.RerankScale, e.defaults.RerankScale)
	if err != nil {
		return err
	}
	*sc = scoreScale{metric: k, levels: k < mDot, scale: r, unitAt: -1}
	lists := req.ResultsPerQuery
	for l := -1; l < len(lists); l++ {
		list, name := req.Chunks, "chunks"
		if l >= 0 {
			list, name = lists[l], jsonread.Idx("results_per_query", l, "")
		}
		for i := range list {
			s := &list[i].Scores
			if s.HasVector && !inRange(k, s.Vector) {
				return errorf(CodeBadField, jsonread.Idx(name, i, ".scores.vector"),
					num(s.Vector)+" is not "+metricNouns[k]+"; set vector_metric to "+fittingMetric(s.Vector))
			}
			if s.HasVector && (k == mL2 || k == mL2Squared) && s.Vector > unitBound(k)+vectorSlack && sc.unitAt < 0 {
				sc.levels, sc.unitOver, sc.unitList, sc.unitAt = false, s.Vector, l, i
			}
			if s.HasRerank && r == RerankProbability && !unit(s.Rerank) {
				return errorf(CodeBadField, jsonread.Idx(name, i, ".scores.rerank"), num(s.Rerank)+" is not a probability; set rerank_scale to logit")
			}
		}
	}
	if !sc.levels && e.levelSignal != "" && (!e.levelSignalRetrieval || vectorFallback(req)) {
		return errorf(CodeBadField, "vector_metric", e.noLevelsMessage(k, sc.unitAt >= 0))
	}
	return nil
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
	terms := c.Terms
	if c.Signal != "" {
		terms = []Term{{Signal: c.Signal, Weight: 1}}
	}
	for _, t := range terms {
		if t.Weight == 0 {
			continue
		}
		switch t.Signal {
		case SigMaxSimilarity:
			return t.Signal, false
		case SigTopScore, SigScoreGap, SigScoreSpread, SigConsensus, SigRetrievalConf:
			name, retrieval = t.Signal, true
		}
	}
	return name, retrieval
}

// noLevelsMessage says why metric k (or l2 past the unit bound: unitOver)
// cannot serve e's policy.
func (e *Engine) noLevelsMessage(k metricKind, unitOver bool) string {
	what := k.name() + " scores"
	if unitOver {
		what += " above " + num(unitBound(k)) + " (embeddings not of unit length)"
	}
	where := ""
	if e.levelSignalRetrieval {
		where = " where a chunk has no rerank, boosted or rrf score"
	}
	return what + ` have no cosine levels, and policy "` + e.ref.Name + `" decides confidence by ` + e.levelSignal +
		", which reads them" + where + ": give cosine similarities or distances of unit-length embeddings, or use a policy that does not decide by cosine levels"
}

// scoreWarnings adds the decision's warnings about its vector scores:
// l2 past the unit bound, and a list in retriever order whose scores run
// the wrong way for the stated metric. Their messages are written in the
// arena (text): a client that keeps sending distances as cosines gets a
// warning on every decision, which must allocate no more than any other.
func (e *Engine) scoreWarnings(req *Request) {
	sc := &e.scale
	if sc.unitAt >= 0 {
		e.a.warn(WarnNotUnitLength, e.text(sc.metric.name(), " score ", e.num(sc.unitOver), " at ", e.path(sc.unitList, sc.unitAt),
			" is above ", e.num(unitBound(sc.metric)), ", so the embeddings are not unit length: the vector scores order the chunks, but no signal reads them as cosine levels"))
	}
	for l := -1; l < len(req.ResultsPerQuery); l++ {
		list := req.Chunks
		if l >= 0 {
			list = req.ResultsPerQuery[l]
		}
		if e.runsBackwards(list, l) {
			return
		}
	}
}

// text is parts joined, written in the arena's message bytes.
func (e *Engine) text(parts ...string) string {
	b := e.msg()
	for _, p := range parts {
		b = append(b, p...)
	}
	return e.done(b)
}

// num is v as num writes it, in the arena's message bytes.
func (e *Engine) num(v float64) string { return e.done(strconv.AppendFloat(e.msg(), v, 'f', -1, 64)) }

// path names list l (-1: chunks, else results_per_query[l]), or its chunk
// i when i >= 0, in the arena's message bytes.
func (e *Engine) path(l, i int) string {
	b := e.msg()
	if l < 0 {
		b = append(b, "chunks"...)
	} else {
		b = strconv.AppendInt(append(b, "results_per_query["...), int64(l), 10)
		b = append(b, ']')
	}
	if i >= 0 {
		b = append(strconv.AppendInt(append(b, '['), int64(i), 10), ']')
	}
	return e.done(b)
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
func (e *Engine) runsBackwards(list []Chunk, l int) bool {
	k := e.scale.metric
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
		v := similarity(k, s.Vector)
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
	if n < 3 || rises < 2 || rises < 2*falls || !(similarity(k, first) < prev) {
		return false
	}
	// The stated metric is a similarity (cosine, dot) and the scores rise,
	// or a distance and they fall.
	code, runs, looks, fits := WarnLooksLikeDistances, "rise", "distances", "cosine_distance, l2 or l2_squared"
	switch {
	case k != mCosine && k != mDot:
		code, runs, looks, fits = WarnLooksLikeSimilarities, "fall", "similarities", "cosine"
		if k == mNegativeDot || first > 1 || first < -1 || last > 1 || last < -1 {
			fits = "dot"
		}
	case first <= 0 && last <= 0:
		fits = "negative_dot"
	case k == mDot && (first > 2 || last > 2):
		fits = "l2_squared or l2"
	}
	e.a.warn(code, e.text("vector scores ", runs, " down ", e.path(l, -1), " (", e.num(first), " first, ", e.num(last), " last), as ", looks,
		" do in retriever order, but vector_metric is ", k.name(), ": if they are ", looks, ", set vector_metric to ", fits))
	return true
}
