package gate

import (
	"strconv"

	"github.com/ctxgate/ctxgate/gate/internal/encode"
	"github.com/ctxgate/ctxgate/gate/internal/jsonread"
	"github.com/ctxgate/ctxgate/gate/internal/swar"
	"github.com/ctxgate/ctxgate/gate/wire"
)

// Per-chunk reasons (decision chunks[].reason), stable tokens.
const (
	ReasonKept              = "kept"
	ReasonQualityLow        = "quality_below_threshold"
	ReasonQualityFallback   = "quality_fallback_all_filtered"
	ReasonEvidenceLow       = "evidence_below_floor"
	ReasonRelevanceLow      = "relevance_below_threshold"
	ReasonRelevanceFallback = "relevance_fallback_all_filtered"
	// ReasonGateFired: a band chose fallback, so the confidence gate
	// fired and the answer uses none of the retrieved chunks (the confidence-gating
	// document's `sources: []`); a host that trusts kept must not inject them.
	ReasonGateFired = "confidence_gate_fired"
)

// chunkWork is the engine's per-chunk record for one decision: what
// Engine.prepare reads from the chunk for every signal (clamped scores,
// token and rune counts, the query terms the text holds), and the chunk's
// outcome (kept, reason, its order_by score). A signal's own per-chunk
// scores are in its state (signals.go).
type chunkWork struct {
	c                  *Chunk
	words              int     // tokens in the text (section quality's word count)
	chars              int     // runes in the text (sufficiency's density)
	qualityHits        int     // section-quality keywords found
	answerHits         int     // answer_coverage query terms found in the text
	coverage           float64 // share of the coverage terms found in this chunk
	vector, bm25       float64 // clamped inputs
	bm25Sat            float64 // bm25/(bm25+s), in [0,1]
	hasVector, hasBM25 bool
	// vector above is the chunk's cosine level, in [0,1], for the signals
	// that read a level: set only when the request's metric has levels
	// (Engine.scale.levels, metric.go). sim is its vector score as a
	// similarity on the metric's own scale (higher is closer; a cosine,
	// unclamped, or an unbounded dot product), set whenever it has one.
	sim    float64
	hasSim bool
	// sem is the semantic retriever's score where a signal ranks or
	// correlates by it: the vector score when the request has any (the
	// level when the metric has levels, as clamped inputs always were,
	// else sim), else the learned-sparse score (scale-free uses only:
	// ranks, correlation).
	sem          float64
	hasSem       bool
	retrieval    float64 // the per-chunk retrieval score (retrievalScore)
	hasRetrieval bool
	score        float64 // the order_by score
	kept         bool
	reason       string
}

// queryTerm is one distinct query token.
type queryTerm struct {
	hash uint64
	// name is the term's folded text, e.qtok.text[name0:name1]: made a string
	// only for a missing aspect's message, not for every term of every
	// query (an allocation each, garbage by the next decision).
	name0, name1 int32
	inQuality    bool   // a section-quality keyword (not a quality stop word)
	inCoverage   bool   // a coverage term (long enough, not a coverage stop word)
	inAnswer     bool   // an answer_coverage term (>= 3 runes or CJK, in neither stop list)
	tail         uint64 // tailBits of its tailKey; 0 unless ASCII
	last         byte   // its last byte with the top bit set (scanBlocks' z); 0 unless ASCII
}

type queryInfo struct {
	terms               []queryTerm
	nQuality, nCoverage int
	nAnswer             int
	// bloom has bit hash>>58 set for every term: most chunk tokens are no
	// query term, and one test turns them away before the table probe.
	bloom uint64
	// first is the block scanner's filter for the ASCII terms (scanASCII);
	// live is first without the terms the current chunk has shown already
	// (hit): a term counts once per chunk, and retrieved passages repeat
	// the query's words, so many chunks soon need no lookup at all.
	first, live scanFilter
	// tails is the number of terms with a tail key (the ones filter
	// reads); liveN of them are left in the current chunk, liveAt were
	// when live was last computed. A query of many terms recomputes live
	// only when liveN has halved: recomputing it at every term found made
	// a 4 KiB query of 1,300 terms against chunks holding them quadratic
	// (1.7 million steps a chunk, seconds a request). A stale live is a
	// superset (it lets dead terms' words through to the lookup, which
	// turns them away), never a miss.
	tails, liveN, liveAt int
	refilters            int // times live was recomputed since analyseQuery (TestLongQueryRefilters)
	// liveMask has bit k set while term k (k < 64) is one filter reads
	// and the current chunk has not shown it: the set live is computed
	// from, so a query of up to 64 terms looks live up in filters (keyed
	// by the mask, for this query: gen) instead of walking its terms. A
	// chunk shows its query terms one by one, and the same few sets recur
	// from chunk to chunk: in the module the walk after each term found
	// was a fiftieth of a 20-chunk decision.
	liveMask, firstMask uint64
	gen                 uint64
	filters             [8]filterMemo
	found               []bool // per term: found in some chunk
	seen                []int  // per term: index+1 of the last chunk it was found in
	table               []int32

	// Not the query's: what decide keeps per policy and per decision. It
	// lives here because queryInfo is the engine scratch this file owns.
	instr instructionsCache
	docs  docSet
}

// msg and done write one message of the decision (arena.msg, arena.done).
func (e *Engine) msg() []byte          { return e.a.msg() }
func (e *Engine) done(b []byte) string { return e.a.done(b) }

func (q *queryInfo) lookup(h uint64) int {
	if len(q.table) == 0 {
		return -1
	}
	mask := uint64(len(q.table) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		t := q.table[i]
		if t == 0 {
			return -1
		}
		if q.terms[t-1].hash == h {
			return int(t - 1)
		}
	}
}

func (e *Engine) analyseQuery(query string) {
	q := &e.q
	k := &e.qtok
	k.toks, k.text, k.ends, k.keep = k.toks[:0], k.text[:0], k.ends[:0], true
	(*queryInfo)(nil).scanWords(query, 0, nil, k)
	q.terms = q.terms[:0]
	q.nQuality, q.nCoverage, q.nAnswer = 0, 0, 0
	q.bloom = 0
	q.table = emptyTable(q.table, 8, len(k.toks))
	minRunes := 3
	if s := e.policy.Sufficiency; s != nil {
		minRunes = s.MinTermRunes
	}
	start := 0
	for i, t := range k.toks {
		end := k.ends[i]
		word := k.text[start:end]
		start = end
		if q.lookup(t.hash) >= 0 {
			continue
		}
		qt := queryTerm{hash: t.hash,
			inQuality:  !qualityStopSet.has(t.hash),
			inCoverage: (t.runes >= minRunes || t.cjk) && !coverageStopSet.has(t.hash)}
		qt.inAnswer = (t.runes >= answerMinRunes || t.cjk) && !qualityStopSet.has(t.hash) && !coverageStopSet.has(t.hash)
		if !qt.inQuality && !qt.inCoverage && !qt.inAnswer {
			// A stop word of every list counts for no signal. Left out of
			// the table, the chunks' many "the", "of" and "is" fail the
			// bloom test instead of probing the table.
			continue
		}
		qt.name0, qt.name1 = int32(end-len(word)), int32(end)
		if qt.inAnswer {
			q.nAnswer++
		}
		if qt.inQuality {
			q.nQuality++
		}
		if qt.inCoverage {
			q.nCoverage++
		}
		if !t.cjk && isASCII(word) {
			qt.tail = tailBits(tailKey(word))
			qt.last = word[len(word)-1] | 0x80
		}
		q.terms = append(q.terms, qt)
		q.bloom |= 1 << (t.hash >> 58)
		mask := uint64(len(q.table) - 1)
		for j := t.hash & mask; ; j = (j + 1) & mask {
			if q.table[j] == 0 {
				q.table[j] = int32(len(q.terms))
				break
			}
		}
	}
	q.found = zeroed(q.found, len(q.terms))
	q.seen = zeroed(q.seen, len(q.terms))
	q.first = q.filter(-1)
	q.tails, q.refilters, q.firstMask = 0, 0, 0
	for k := range q.terms {
		if q.terms[k].tail != 0 {
			q.tails++
			q.firstMask |= 1 << (k & 63)
		}
	}
	q.gen++
}

// scanFilter is what scanBlocks tests a chunk's ASCII words against: a
// word is looked up only if it passes both. tail is a two-bit bloom of the
// live terms' tailKeys (tailBits). last1 and last2 are the live terms' last
// bytes without their top bit (scanBlocks compares bytes below 0x80), each
// repeated in all eight bytes (0 for none: no word ends with a 0), or all
// is msb when they have more than two distinct last bytes: then every word
// ending is a candidate. Whether a block's word endings are candidates is one SWAR
// comparison per last byte, so the per-word test runs only at words that
// end like a live term (a few in ten), not at every word.
type scanFilter struct {
	tail, last1, last2, all uint64
}

// filterMemo is a scanFilter remembered for the live set mask.
type filterMemo struct {
	mask uint64
	gen  uint64
	f    scanFilter
}

// liveFilter is filter(stamp) for the current chunk, from q.filters when
// the query has at most 64 terms (liveMask is then the live set).
func (q *queryInfo) liveFilter(stamp int) scanFilter {
	if len(q.terms) > 64 {
		return q.filter(stamp)
	}
	m := &q.filters[(q.liveMask*hashMul)>>61]
	if m.gen != q.gen || m.mask != q.liveMask {
		m.mask, m.gen, m.f = q.liveMask, q.gen, q.filter(stamp)
	}
	return m.f
}

// filter is the scanFilter for the terms not stamped with stamp (-1: all).
func (q *queryInfo) filter(stamp int) scanFilter {
	var f scanFilter
	var l1, l2 byte
	for k := range q.terms {
		t := &q.terms[k]
		if t.tail == 0 || q.seen[k] == stamp {
			continue
		}
		f.tail |= t.tail
		switch {
		case l1 == 0 || l1 == t.last:
			l1 = t.last
		case l2 == 0 || l2 == t.last:
			l2 = t.last
		default:
			f.all = swar.Msb
		}
	}
	f.last1, f.last2 = uint64(l1&0x7F)*swar.Lsb, uint64(l2&0x7F)*swar.Lsb
	return f
}

// prepare fills the per-chunk scratch: clamped scores, token counts and
// which query terms each chunk holds.
func (e *Engine) prepare(chunks []Chunk) {
	n := len(chunks)
	if cap(e.work) < n {
		e.work = make([]chunkWork, n)
	}
	e.work = e.work[:n]
	e.order = zeroed(e.order, n)
	e.tmp = zeroed(e.tmp, n)
	e.keys = resizeFloat(e.keys, n)
	sat := 10.0
	if ev := e.policy.Evidence; ev != nil {
		sat = ev.BM25Saturation
	}
	// Rerank scores are logits when the request (or the host) says so, or,
	// with no rerank_scale, when one of them is outside [0,1].
	sc := &e.scale
	logits, anyVector := sc.scale == RerankLogit, false
	for i := range chunks {
		s := &chunks[i].Scores
		if sc.scale == "" && s.HasRerank && (s.Rerank < 0 || s.Rerank > 1) {
			logits = true
		}
		anyVector = anyVector || s.HasVector
	}
	q := &e.q
	for i := range chunks {
		c := &chunks[i]
		w := &e.work[i]
		*w = chunkWork{c: c, kept: true, reason: ReasonKept}
		if c.Scores.HasVector {
			w.sim, w.hasSim = similarity(sc.metric, c.Scores.Vector), true
			w.sem, w.hasSem = w.sim, true
			if sc.levels {
				w.vector, w.hasVector = clamp01(w.sim), true
				w.sem = w.vector
			}
		} else if c.Scores.HasSparse && !anyVector {
			w.sem, w.hasSem = c.Scores.Sparse, true
		}
		if c.Scores.HasBM25 {
			w.bm25, w.hasBM25 = maxf(0, c.Scores.BM25), true
			w.bm25Sat = w.bm25 / (w.bm25 + sat)
		}
		w.retrieval, w.hasRetrieval = retrievalScore(&c.Scores, logits, w.vector, w.hasVector)
		var hits termHits
		w.words, w.chars = q.scanText(c.Text, i+1, &hits)
		w.qualityHits, w.answerHits = hits.qualityHits, hits.answerHits
		w.coverage = 1
		if q.nCoverage > 0 {
			w.coverage = float64(hits.coverageHits) / float64(q.nCoverage)
		}
	}
}

func (e *Engine) addSignal(name string, v float64) { e.a.addSignal(name, v) }

func (e *Engine) signal(name string) (float64, bool) { return e.a.signal(name) }

// confidence forms the overall confidence from the signals (policy.confidence).
func (e *Engine) confidence() float64 {
	c := &e.policy.Confidence
	if c.Signal != "" {
		v, _ := e.signal(c.Signal)
		return clamp01(snap(v))
	}
	sum := c.Bias
	for _, t := range c.Terms {
		v, ok := e.signal(t.Signal)
		if !ok {
			v = t.Missing
		}
		sum += float64(t.Weight * v)
	}
	if c.Combine == "logistic" {
		return clamp01(snap(sigmoid(sum)))
	}
	return clamp01(snap(sum))
}

// checkRequest rejects what no rule could decide sanely, naming the field.
// Scores are clamped by documented rules instead (docs/decision.md): rerank,
// rrf, boosted and graph to [0,1], bm25 and sparse to >= 0; vector and
// rerank scores are checked against the request's score conventions
// (Engine.checkScores, metric.go). A chunk's field
// path ("chunks[3]") is built only for an error: built for every chunk it
// was several allocations per chunk on every decision.
func checkRequest(req *Request) error {
	if req == nil {
		return errorf(CodeBadField, "", "request is nil")
	}
	if wire.BlankQuery(req.Query) {
		return errorf(CodeBadField, "query", "must not be empty")
	}
	if len(req.Chunks) > 0 && len(req.ResultsPerQuery) > 0 {
		return errorf(CodeBadField, "results_per_query", "give chunks or results_per_query, not both")
	}
	for i, x := range req.QueryEmbedding {
		if !finite(x) {
			return errorf(CodeBadField, jsonread.Idx("query_embedding", i, ""), "must be a finite number")
		}
	}
	dims := len(req.QueryEmbedding)
	for i := range req.Chunks {
		if _, msg, _ := chunkFault(&req.Chunks[i], dims); msg != "" {
			field, msg := checkChunk(&req.Chunks[i], dims)
			return errorf(CodeBadField, jsonread.Idx("chunks", i, "")+field, msg)
		}
	}
	for l, list := range req.ResultsPerQuery {
		for i := range list {
			if _, msg, _ := chunkFault(&list[i], dims); msg != "" {
				field, msg := checkChunk(&list[i], dims)
				return errorf(CodeBadField, jsonread.Idx(jsonread.Idx("results_per_query", l, ""), i, "")+field, msg)
			}
		}
	}
	return nil
}

// checkInput is checkRequest, then the vector and rerank scores against
// the request's score conventions, which it resolves into e.scale for
// prepare (Engine.checkScores).
func (e *Engine) checkInput(req *Request) error {
	if err := checkRequest(req); err != nil {
		return err
	}
	return e.checkScores(req)
}

// checkChunk returns what is wrong with c, if anything: the field's path
// below the chunk (".scores.vector") and the message; msg is "" when c is
// fine.
func checkChunk(c *Chunk, dims int) (field, msg string) {
	field, msg, at := chunkFault(c, dims)
	switch {
	case at < 0:
		msg = "has " + strconv.Itoa(len(c.Embedding)) + " dimensions, query_embedding has " + strconv.Itoa(dims)
	case at > 0:
		field = jsonread.Idx(".embedding", at-1, "")
	}
	return field, msg
}

// chunkFault is checkChunk without the strings it builds: at is -1 for
// embedding dimensions that differ from dims, i+1 for a non-finite
// embedding[i], else 0. It allocates nothing, so TinyGo keeps no frame of
// its pointers for the collector, as it must in a function that may
// allocate (a memory.fill and six runtime memmoves per chunk under wazero);
// checkRequest calls it for every chunk and checkChunk only for a fault.
func chunkFault(c *Chunk, dims int) (field, msg string, at int) {
	s := &c.Scores
	const notFinite = "must be a finite number"
	switch {
	case s.HasVector && !finite(s.Vector):
		return ".scores.vector", notFinite, 0
	case s.HasBM25 && !finite(s.BM25):
		return ".scores.bm25", notFinite, 0
	case s.HasRerank && !finite(s.Rerank):
		return ".scores.rerank", notFinite, 0
	case s.HasRRF && !finite(s.RRF):
		return ".scores.rrf", notFinite, 0
	case s.HasBoosted && !finite(s.Boosted):
		return ".scores.boosted", notFinite, 0
	case s.HasGraph && !finite(s.Graph):
		return ".scores.graph", notFinite, 0
	case s.HasSparse && !finite(s.Sparse):
		return ".scores.sparse", notFinite, 0
	}
	if c.HasTrust && !unit(c.Trust) {
		return ".trust", "must be in [0,1]", 0
	}
	if c.HasTemperature && (!finite(c.Temperature) || c.Temperature < 0) {
		return ".temperature", "must be a finite number >= 0", 0
	}
	if len(c.Embedding) > 0 {
		if dims > 0 && len(c.Embedding) != dims {
			return ".embedding", "dimensions", -1
		}
		for i, x := range c.Embedding {
			if !finite(x) {
				return "", notFinite, i + 1
			}
		}
	}
	return "", "", 0
}

// decide runs the whole pipeline (merge, per-chunk signals, filters, order,
// tags, confidence, band, action, prompt, refusal, gap event) and writes
// the decision into the engine's arena.
func (e *Engine) decide(req *Request) error {
	if err := e.checkInput(req); err != nil {
		return err
	}
	p := e.policy
	chunks := req.Chunks
	if len(chunks) == 0 && len(req.ResultsPerQuery) > 0 {
		chunks = mergeResults(req.ResultsPerQuery, p.Merge.MaxResults, &e.scale)
	}
	d := e.a.reset(e.ref)
	e.scoreWarnings(req)
	e.analyseQuery(req.Query)
	e.prepare(chunks)
	for _, g := range e.running {
		g.run(e, req)
	}

	w := e.work
	n := len(w)
	by := e.orderBy()
	for i := range w {
		w[i].score = e.orderScore(by, i)
	}
	// Kept chunks in score order (ties in input order), then dropped ones in
	// input order.
	order := e.order[:n]
	kept := 0
	for i := range w {
		if w[i].kept {
			order[kept] = i
			kept++
		}
	}
	order = order[:kept]
	keys := e.keys[:n]
	for i := range w {
		keys[i] = w[i].score
	}
	sortDesc(order, keys, e.tmp[:kept])

	var out Outcome
	switch {
	case n == 0:
		out = p.NoChunks
		d.Confidence = 0
		d.QueryType = QueryTypeVectorFallback
	case kept == 0:
		out = p.NoneKept
		d.Confidence = e.confidence()
		b := append(e.msg(), "No chunk reached the evidence floor "...)
		b = appendFixed(b, p.Filters.EvidenceFloor, 2)
		b = append(b, ": add content that answers this question, or check the retriever."...)
		e.a.recommend(e.done(b))
	default:
		d.Confidence = e.confidence()
		out = p.Bands[len(p.Bands)-1].Outcome
		for _, b := range p.Bands {
			if d.Confidence >= b.Min {
				out = b.Outcome
				break
			}
		}
	}
	if kept > 0 && out.Action == ActionFallback {
		// The confidence gate fired: the model answers from its own
		// knowledge, so no chunk is kept or tagged, and all are listed as
		// dropped in input order.
		for i := range w {
			w[i].kept, w[i].reason = false, ReasonGateFired
		}
		kept, order = 0, order[:0]
	}
	d.Chunks = e.a.outcomes(n)
	for t, i := range order {
		e.outcome(&d.Chunks[t], i, tagName(t+1))
	}
	dropped := d.Chunks[kept:]
	for i := range w {
		if !w[i].kept && len(dropped) > 0 {
			e.outcome(&dropped[0], i, "")
			dropped = dropped[1:]
		}
	}
	e.writeOutcomes(d.Chunks, order)

	d.Action, d.Level, d.Band, d.Interpretation = out.Action, out.Level, out.Label, out.Interpretation
	d.FlagForReview = out.Flag || e.a.lowConfidence
	if d.QueryType == "" {
		if d.Action == ActionInject || d.Action == ActionCaveat {
			d.QueryType = QueryTypeVectorSearch
		} else {
			d.QueryType = QueryTypeGatedFallback
		}
	}
	d.Signals = e.a.signals
	switch d.Action {
	case ActionInject, ActionCaveat:
		if kept > 0 {
			d.Prompt = e.constrainedPrompt(order)
		}
		if d.Action == ActionCaveat {
			d.Caveat = fill(p.Messages.Caveat, req.Query, e.a.missing)
		}
	case ActionFallback:
		if p.Messages.FallbackPrompt != "" {
			d.Prompt = e.a.heldPrompt(Prompt{Minimal: fill(p.Messages.FallbackPrompt, req.Query, e.a.missing)})
		}
	case ActionRefuse:
		d.Refusal = e.a.refusalOf(Refusal{Type: "hard", Message: fill(p.Messages.Refusal, req.Query, e.a.missing)})
	}
	d.MissingAspects = e.a.missing
	d.ConfidenceFactors = e.a.factors
	d.Recommendations = e.a.recs
	switch {
	case d.Action == ActionRefuse:
		d.GapEvent = e.gapEvent("refusal_hard", req, d)
	case d.FlagForReview:
		d.GapEvent = e.gapEvent("low_confidence", req, d)
	}
	// The output limit, for Evaluate's JSON and for what Decide returns
	// alike (encode.DecisionSize).
	limit := maxDecisionBytes(&p.Limits)
	size := encode.DecisionSize(d, &e.a.sources, limit)
	if size > limit {
		e.a.release()
		field := "chunks"
		if len(req.Chunks) == 0 && len(req.ResultsPerQuery) > 0 {
			field = "results_per_query"
		}
		return outputLimitError(field, "decision", size, limit)
	}
	e.a.size = size // the encoder's first allocation, when known
	return nil
}

// tagNames holds "S1".."S128", so tagging the kept chunks allocates nothing
// (a string per chunk per decision was most of decide's allocations, and
// every allocation is garbage the TinyGo collector has to sweep).
var tagNames = func() (t [128]string) {
	for i := range t {
		t[i] = "S" + strconv.Itoa(i+1)
	}
	return t
}()

func tagName(n int) string {
	if n >= 1 && n <= len(tagNames) {
		return tagNames[n-1]
	}
	return "S" + strconv.Itoa(n)
}

// ordering is one order_by entry, resolved when the engine is made
// (Engine.resolveSignals): a built-in ordering (by >= 0), or a signal
// group's (scorer). Orderings are small integers and interface calls, not
// names: orderScore runs per chunk, and under TinyGo a switch on a string
// is a string comparison per case.
type ordering struct {
	name   string
	by     int
	scorer chunkScorer
}

// The built-in orderings.
const (
	byInput = iota
	byVector
	byCoverage
	byRetrieval
)

// builtinOrder is the built-in ordering named name, or -1.
func builtinOrder(name string) int {
	switch name {
	case OrderInput:
		return byInput
	case OrderVector:
		return byVector
	case OrderCoverage:
		return byCoverage
	case OrderRetrieval:
		return byRetrieval
	}
	return -1
}

var inputOrder = ordering{name: OrderInput, by: byInput}

// orderBy is the first ordering in order_by whose inputs the request has:
// vector needs a vector score on some chunk, retrieval_score some score
// retrievalScore takes, a group's ordering its state's say (scored); the
// others always apply. With none, chunks keep input order.
func (e *Engine) orderBy() *ordering {
	for i := range e.orderings {
		o := &e.orderings[i]
		present := true
		switch {
		case o.scorer != nil:
			present = o.scorer.scored()
		case o.by == byVector || o.by == byRetrieval:
			present = false
			for i := range e.work {
				w := &e.work[i]
				if (o.by == byRetrieval && w.hasRetrieval) || (o.by == byVector && w.hasSim) {
					present = true
					break
				}
			}
		}
		if present {
			return o
		}
	}
	return &inputOrder
}

// orderScore is chunk i's score under ordering o; input order scores every
// chunk 0, so the stable sort keeps the request's order.
func (e *Engine) orderScore(o *ordering, i int) float64 {
	if o.scorer != nil {
		return o.scorer.chunkScore(i)
	}
	w := &e.work[i]
	switch o.by {
	case byVector:
		if w.hasVector {
			return w.vector // the level, as clamped inputs always were
		}
		return w.sim
	case byCoverage:
		return w.coverage
	case byRetrieval:
		return w.retrieval
	}
	return 0
}

// outcome fills o, a zero ChunkOutcome, with chunk i's verdict
// (writeOutcomes adds the groups' per-chunk numbers).
func (e *Engine) outcome(o *ChunkOutcome, i int, tag string) {
	w := &e.work[i]
	o.ID, o.DocID, o.Tag, o.Kept, o.Reason = w.c.ID, w.c.DocID, tag, w.kept, w.reason
	o.Score = clamp01(w.score)
	// The vector score as the gate used it: the cosine level, or, for a
	// metric without levels, the similarity on its own scale.
	o.Vector, o.HasVector = w.vector, w.hasVector
	if !w.hasVector {
		o.Vector, o.HasVector = w.sim, w.hasSim
	}
	o.BM25, o.HasBM25 = w.bm25Sat, w.hasBM25
}

// writeOutcomes has the groups write their per-chunk numbers into out,
// the outcomes of the chunks of order (kept, in that order) and then of the
// dropped chunks in input order, as decide lays them out. It is apart from
// outcome because an interface call makes TinyGo keep a frame of the
// caller's pointers for its collector: in outcome, called per chunk, that
// was ~380 instructions a chunk in the module.
func (e *Engine) writeOutcomes(out []ChunkOutcome, order []int) {
	if len(e.writers) == 0 {
		return
	}
	t := 0
	for _, i := range order {
		for _, g := range e.writers {
			g.writeOutcome(&out[t], i)
		}
		t++
	}
	for i := range e.work {
		if !e.work[i].kept && t < len(out) {
			for _, g := range e.writers {
				g.writeOutcome(&out[t], i)
			}
			t++
		}
	}
}

// gapEvent records a knowledge gap: the query, its signals and the top five
// chunks by score (kept or not).
func (e *Engine) gapEvent(kind string, req *Request, d *Decision) *GapEvent {
	g := e.a.gapEvent(kind, req, d)
	w := e.work
	order := e.order[:len(w)]
	for i := range order {
		order[i] = i
	}
	keys := e.keys[:len(w)]
	for i := range w {
		keys[i] = w[i].score
	}
	sortDesc(order, keys, e.tmp[:len(w)])
	for _, i := range order {
		if len(g.TopChunks) == 5 {
			break
		}
		g.TopChunks = append(g.TopChunks, GapChunk{ID: w[i].c.ID, DocID: w[i].c.DocID, Score: clamp01(w[i].score)})
	}
	return g
}
