package candidates

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ctxgate/ctxgate/bench/eval"
)

// tokens: letters/digits/marks lower-cased; CJK (Han/Hiragana/Katakana/Hangul?) bigrams; Thai bigrams.
func isCJK(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r)
}
func isThai(r rune) bool { return r >= 0x0E00 && r <= 0x0E7F }

type tok struct {
	s    string
	sent int
	pos  int
}

var hangulBigrams = true
var titleInSet = false

func tokenize(text string) []tok {
	var out []tok
	var b strings.Builder
	sent, pos := 0, 0
	var prevCJK rune = -1
	flush := func() {
		if b.Len() > 0 {
			out = append(out, tok{b.String(), sent, pos})
			pos++
			b.Reset()
		}
	}
	for i, r := range text {
		_ = i
		if isCJK(r) || isThai(r) || (hangulBigrams && unicode.Is(unicode.Hangul, r)) {
			flush()
			lr := unicode.ToLower(r)
			if prevCJK >= 0 {
				out = append(out, tok{string(prevCJK) + string(lr), sent, pos})
				pos++
			}
			prevCJK = lr
			continue
		}
		if prevCJK >= 0 {
			prevCJK = -1
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) {
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		flush()
		if r == '.' || r == '?' || r == '!' || r == '\n' || r == '।' || r == '。' {
			sent++
		}
	}
	flush()
	return out
}

func runeLen(s string) int { return utf8.RuneCountInString(s) }

func prefix(s string, n int) string {
	if n <= 0 {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

var stop = func() map[string]bool {
	m := map[string]bool{}
	for w := range eval.StopWords {
		m[w] = true
	}
	return m
}()

// queryTerms with min runes, excluding stop words; folded by prefix pfx (0 = none)
func queryTerms(q string, minRunes, pfx int) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range tokenize(q) {
		if stop[t.s] || (runeLen(t.s) < minRunes && !isCJKTok(t.s)) {
			continue
		}
		k := prefix(t.s, pfx)
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, k)
	}
	return out
}

func isCJKTok(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return isCJK(r) || isThai(r) || (hangulBigrams && unicode.Is(unicode.Hangul, r))
}

type chunkInfo struct {
	toks  []tok
	set   map[string]bool // prefix-folded
	n     int
	title map[string]bool
}

func chunkOf(c eval.Chunk, pfx int) chunkInfo {
	ts := tokenize(c.Text)
	ci := chunkInfo{toks: ts, set: map[string]bool{}, n: len(ts), title: map[string]bool{}}
	for _, t := range ts {
		ci.set[prefix(t.s, pfx)] = true
	}
	for _, t := range tokenize(c.Title) {
		ci.title[prefix(t.s, pfx)] = true
		if titleInSet {
			ci.set[prefix(t.s, pfx)] = true
		}
	}
	return ci
}

type feats map[string]float64

func stats(xs []float64) (max, mean, sd, min float64) {
	if len(xs) == 0 {
		return
	}
	max, min = math.Inf(-1), math.Inf(1)
	for _, x := range xs {
		mean += x
		if x > max {
			max = x
		}
		if x < min {
			min = x
		}
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		sd += (x - mean) * (x - mean)
	}
	sd = math.Sqrt(sd / float64(len(xs)))
	return
}

func sortedDesc(xs []float64) []float64 {
	s := append([]float64(nil), xs...)
	sort.Sort(sort.Reverse(sort.Float64Slice(s)))
	return s
}

// retrieval features for one score list (present values only), and N chunks
func retrFeats(f feats, name string, vals []float64, n int) {
	if len(vals) == 0 {
		return
	}
	mx, mean, sd, mn := stats(vals)
	s := sortedDesc(vals)
	f[name+"_max"] = mx
	f[name+"_present"] = float64(len(vals)) / float64(n)
	if sd > 0 {
		f[name+"_z"] = (mx - mean) / sd
	} else {
		f[name+"_z"] = 0
	}
	if len(s) > 1 && mx-mn > 0 {
		f[name+"_gap12"] = (s[0] - s[1]) / (mx - mn)
	}
	if mean != 0 {
		f[name+"_maxmean"] = mx / mean
	}
	if mx > 0 {
		f[name+"_minmax"] = mn / mx
		f[name+"_meanmax"] = mean / mx
		if len(s) > 1 {
			f[name+"_s2s1"] = s[1] / s[0]
		}
	}
	if sd > 0 && mean != 0 {
		f[name+"_cv"] = sd / mean
		f[name+"_cvs"] = (sd / mean) / (1 + sd/mean)
	}
}

func features(it eval.Item, pfx int) feats {
	f := feats{}
	r := it.Req
	n := len(r.Chunks)
	var vec, bm, sp []float64
	both := 0
	for _, c := range r.Chunks {
		if c.HasVector {
			vec = append(vec, c.Vector)
		}
		if c.HasBM25 {
			bm = append(bm, c.BM25)
		}
		if c.HasSparse {
			sp = append(sp, c.Sparse)
		}
		second := c.HasVector || c.HasSparse
		if second && c.HasBM25 {
			both++
		}
	}
	if len(vec)+len(sp) > 0 && len(bm) > 0 {
		f["has_pair"] = 1
		f["both"] = float64(both) / float64(n)
		// both within top 3 (by input order = retriever fused order; do not use position: use score order)
	}
	f["logn"] = math.Log(float64(n))
	f["invn"] = 1 / float64(n)
	retrFeats(f, "vec", vec, n)
	retrFeats(f, "bm", bm, n)
	retrFeats(f, "sp", sp, n)
	second := vec
	if len(sp) > 0 {
		second = sp
	}
	retrFeats(f, "sec", second, n)
	// rank agreement between bm25 and the second retriever over chunks with both
	type pair struct{ a, b float64 }
	var ps []pair
	bi, si := -1, -1
	var bbest, sbest float64
	for i, c := range r.Chunks {
		sv, has := c.Vector, c.HasVector
		if c.HasSparse {
			sv, has = c.Sparse, true
		}
		if has && c.HasBM25 {
			ps = append(ps, pair{c.BM25, sv})
		}
		if c.HasBM25 && (bi < 0 || c.BM25 > bbest) {
			bi, bbest = i, c.BM25
		}
		if has && (si < 0 || sv > sbest) {
			si, sbest = i, sv
		}
	}
	if bi >= 0 && si >= 0 {
		// cross: second score of bm25's best relative to second's best, and vice versa
		c := r.Chunks[bi]
		sv, has := c.Vector, c.HasVector
		if c.HasSparse {
			sv, has = c.Sparse, true
		}
		if has && sbest > 0 {
			f["x_sec_of_bmtop"] = sv / sbest
		}
		c = r.Chunks[si]
		if c.HasBM25 && bbest > 0 {
			f["x_bm_of_sectop"] = c.BM25 / bbest
		}
		f["x_min"] = math.Min(f["x_sec_of_bmtop"], f["x_bm_of_sectop"])
		// best chunk by sum of within-request max-normalized scores (missing = 0)
		best := 0.0
		for _, c := range r.Chunks {
			v := 0.0
			if c.HasBM25 && bbest > 0 {
				v += c.BM25 / bbest
			}
			sv, has := c.Vector, c.HasVector
			if c.HasSparse {
				sv, has = c.Sparse, true
			}
			if has && sbest > 0 {
				v += sv / sbest
			}
			if v > best {
				best = v
			}
		}
		f["x_sumbest"] = best / 2
		if bi == si {
			f["agree_top"] = 1
		} else {
			f["agree_top"] = 0
		}
	}
	if len(ps) >= 2 {
		conc, tot := 0.0, 0.0
		for i := range ps {
			for j := i + 1; j < len(ps); j++ {
				d := (ps[i].a - ps[j].a) * (ps[i].b - ps[j].b)
				if d > 0 {
					conc++
				} else if d < 0 {
					conc--
				}
				tot++
			}
		}
		f["tau"] = conc / tot
	}
	if len(bm) > 0 {
		qn := len(queryTerms(r.Query, 1, 0))
		if qn > 0 {
			mx, mean, _, _ := stats(bm)
			f["bm_perterm"] = mx / float64(qn)
			f["bm_mean_perterm"] = mean / float64(qn)
		}
	}
	// agreement among each retriever's top chunks (by score, not position)
	{
		type cs struct {
			b, s       float64
			hasB, hasS bool
		}
		var cl []cs
		for _, c := range r.Chunks {
			sv, has := c.Vector, c.HasVector
			if c.HasSparse {
				sv, has = c.Sparse, true
			}
			cl = append(cl, cs{c.BM25, sv, c.HasBM25, has})
		}
		topShare := func(m int, byB bool) (float64, bool) {
			idx := []int{}
			for i, c := range cl {
				if (byB && c.hasB) || (!byB && c.hasS) {
					idx = append(idx, i)
				}
			}
			if len(idx) == 0 {
				return 0, false
			}
			sort.SliceStable(idx, func(a, b int) bool {
				if byB {
					return cl[idx[a]].b > cl[idx[b]].b
				}
				return cl[idx[a]].s > cl[idx[b]].s
			})
			if len(idx) > m {
				idx = idx[:m]
			}
			h := 0
			for _, i := range idx {
				if (byB && cl[i].hasS) || (!byB && cl[i].hasB) {
					h++
				}
			}
			return float64(h) / float64(len(idx)), true
		}
		nb := 0
		for _, c := range cl {
			if c.hasB && c.hasS {
				nb++
			}
		}
		for _, cap := range []int{3, 5, 8} {
			f[fmt.Sprintf("both_cap%d", cap)] = math.Min(float64(nb), float64(cap)) / float64(cap)
		}
		for _, m := range []int{1, 3, 5} {
			a, ok1 := topShare(m, true)
			b, ok2 := topShare(m, false)
			if ok1 && ok2 {
				f[fmt.Sprintf("both_top%d", m)] = (a + b) / 2
			}
		}
		if bbest > 0 && sbest > 0 {
			w := 0.0
			for _, c := range cl {
				if c.hasB && c.hasS {
					w += (c.b / bbest) * (c.s / sbest)
				}
			}
			f["both_w"] = w / float64(n)
		}
	}
	// document concentration
	docs := map[string]int{}
	for _, c := range r.Chunks {
		docs[c.DocID]++
	}
	mx := 0
	for _, v := range docs {
		if v > mx {
			mx = v
		}
	}
	f["ndocs"] = float64(len(docs)) / float64(n)
	if n > 1 {
		f["conc"] = float64(n-len(docs)) / float64(n-1)
	}
	f["maxdoc"] = float64(mx) / float64(n)

	var texts []string
	for _, c := range r.Chunks {
		texts = append(texts, eval.ChunkText(c.Title, c.Text))
	}
	f["baseline"] = eval.MaxCoverage(r.Query, texts)
	lex := lexFeats(it, pfx)
	for k, v := range lex {
		f[k] = v
	}
	if pfx != 0 {
		for k, v := range lexFeats(it, 0) {
			f[k+"@0"] = v
		}
	}
	old := titleInSet
	titleInSet = !old
	for k, v := range lexFeats(it, pfx) {
		if titleInSet {
			f[k+"_t"] = v
		} else {
			f[k+"_n"] = v
		}
	}
	titleInSet = old
	return f
}

func lexFeats(it eval.Item, pfx int) feats {
	f := feats{}
	r := it.Req
	n := len(r.Chunks)
	// lexical
	qt := queryTerms(r.Query, 3, pfx)
	qtAll := queryTerms(r.Query, 1, pfx)
	f["qterms"] = float64(len(qt))
	chunks := make([]chunkInfo, n)
	df := map[string]int{}
	for i, c := range r.Chunks {
		chunks[i] = chunkOf(c, pfx)
		for _, t := range qt {
			if chunks[i].set[t] {
				df[t]++
			}
		}
	}
	// idf among the request's chunks
	w := map[string]float64{}
	var wsum float64
	for _, t := range qt {
		w[t] = math.Log((float64(n) + 1) / (float64(df[t]) + 0.5))
		wsum += w[t]
	}
	var maxCov, maxWCov, maxTitle, maxSentCov, maxProx float64
	var covs []float64
	missingAll := 0
	for _, t := range qt {
		if df[t] == 0 {
			missingAll++
		}
	}
	for _, ch := range chunks {
		found := 0
		var wf float64
		tf := 0
		for _, t := range qt {
			if ch.set[t] {
				found++
				wf += w[t]
			}
			if ch.title[t] {
				tf++
			}
		}
		cov := 0.0
		if len(qt) > 0 {
			cov = float64(found) / float64(len(qt))
			if float64(tf)/float64(len(qt)) > maxTitle {
				maxTitle = float64(tf) / float64(len(qt))
			}
		}
		covs = append(covs, cov)
		if cov > maxCov {
			maxCov = cov
		}
		if wsum > 0 && wf/wsum > maxWCov {
			maxWCov = wf / wsum
		}
		// sentence coverage: max share of query terms in one sentence
		bySent := map[int]map[string]bool{}
		qset := map[string]bool{}
		for _, t := range qt {
			qset[t] = true
		}
		for _, t := range ch.toks {
			k := prefix(t.s, pfx)
			if qset[k] {
				if bySent[t.sent] == nil {
					bySent[t.sent] = map[string]bool{}
				}
				bySent[t.sent][k] = true
			}
		}
		for _, m := range bySent {
			if len(qt) > 0 && float64(len(m))/float64(len(qt)) > maxSentCov {
				maxSentCov = float64(len(m)) / float64(len(qt))
			}
		}
		// proximity: minimal window holding all distinct found terms; score = found/len(qt) * found/window
		if found >= 2 {
			win := minWindow(ch.toks, qset, pfx, found)
			p := float64(found) / float64(len(qt)) * float64(found) / float64(win)
			if p > maxProx {
				maxProx = p
			}
		}
	}
	f["cov_max"] = maxCov
	acBest := math.Inf(-1)
	for i, ch := range chunks {
		z := 0.3946 + 4.5741*covs[i] - 0.1881*math.Sqrt(float64(ch.n))
		if z > acBest {
			acBest = z
		}
	}
	f["ac_logit"] = acBest
	f["ac_p"] = 1 / (1 + math.Exp(-acBest))
	lse, nor := 0.0, 1.0
	var zs []float64
	for i, ch := range chunks {
		z := 0.3946 + 4.5741*covs[i] - 0.1881*math.Sqrt(float64(ch.n))
		zs = append(zs, z)
		lse += math.Exp(z - acBest)
		nor *= 1 - 1/(1+math.Exp(-z))
	}
	f["ac_lse"] = acBest + math.Log(lse)
	f["ac_nor"] = -math.Log(math.Max(nor, 1e-12))
	szs := sortedDesc(zs)
	if len(szs) > 1 {
		f["ac_2nd"] = szs[1]
	} else {
		f["ac_2nd"] = -10
	}
	mz := 0.0
	for _, z := range zs {
		mz += z
	}
	f["ac_mean"] = mz / float64(len(zs))
	if asksNumber(r.Query) {
		f["qnum"] = 1
		// a sentence holding a query term and a number, in a chunk of near-best coverage
		ok := 0.0
		qs := map[string]bool{}
		for _, t := range qt {
			qs[t] = true
		}
		for i, ch := range chunks {
			if covs[i] < maxCov*0.75 || maxCov == 0 {
				continue
			}
			sentQ := map[int]bool{}
			sentN := map[int]bool{}
			for _, t := range ch.toks {
				if qs[prefix(t.s, pfx)] {
					sentQ[t.sent] = true
				}
				for _, r := range t.s {
					if unicode.IsDigit(r) {
						sentN[t.sent] = true
					}
					break
				}
			}
			for s := range sentQ {
				if sentN[s] {
					ok = 1
				}
			}
		}
		f["num_ok"] = ok
		f["num_miss"] = 1 - ok
	}
	f["wcov_max"] = maxWCov
	f["title_cov"] = maxTitle
	f["sent_cov"] = maxSentCov
	f["prox"] = maxProx
	if len(qt) > 0 {
		f["missing_all"] = float64(missingAll) / float64(len(qt))
	}
	cm, cmean, _, _ := stats(covs)
	_ = cm
	f["cov_mean"] = cmean
	// multi-chunk features that are constant (0) for a single chunk
	if n > 1 {
		f["cov_others"] = (cmean*float64(n) - maxCov) / float64(n-1)
		o5 := 0
		skipped := false
		for _, c := range covs {
			if c == maxCov && !skipped {
				skipped = true
				continue
			}
			if c >= 0.5 {
				o5++
			}
		}
		f["n50_others"] = float64(o5) / float64(n-1)
	}
	cnt := 0
	for _, c := range covs {
		if c >= maxCov-1e-9 && maxCov > 0 {
			cnt++
		}
	}
	f["cov_ntop"] = float64(cnt) / float64(n)
	// phrase: share of adjacent query-term pairs found adjacent in some chunk
	qtoks := tokenize(r.Query)
	var pairs [][2]string
	for i := 0; i+1 < len(qtoks); i++ {
		a, b := prefix(qtoks[i].s, pfx), prefix(qtoks[i+1].s, pfx)
		if stop[qtoks[i].s] && stop[qtoks[i+1].s] {
			continue
		}
		pairs = append(pairs, [2]string{a, b})
	}
	if len(pairs) > 0 {
		best := 0.0
		for _, ch := range chunks {
			adj := map[[2]string]bool{}
			for i := 0; i+1 < len(ch.toks); i++ {
				adj[[2]string{prefix(ch.toks[i].s, pfx), prefix(ch.toks[i+1].s, pfx)}] = true
			}
			hit := 0
			for _, p := range pairs {
				if adj[p] {
					hit++
				}
			}
			if v := float64(hit) / float64(len(pairs)); v > best {
				best = v
			}
		}
		f["phrase"] = best
	}
	// union coverage of the best doc (passages of one doc pooled)
	bydoc := map[string]map[string]bool{}
	for i, c := range r.Chunks {
		if bydoc[c.DocID] == nil {
			bydoc[c.DocID] = map[string]bool{}
		}
		for _, t := range qt {
			if chunks[i].set[t] {
				bydoc[c.DocID][t] = true
			}
		}
	}
	bestDoc := 0.0
	for _, m := range bydoc {
		if len(qt) > 0 && float64(len(m))/float64(len(qt)) > bestDoc {
			bestDoc = float64(len(m)) / float64(len(qt))
		}
	}
	f["doc_cov"] = bestDoc
	f["doc_gain"] = bestDoc - maxCov
	// digits in best-coverage chunk
	for i, c := range covs {
		if c == maxCov {
			d := 0.0
			for _, t := range chunks[i].toks {
				if t.s[0] >= '0' && t.s[0] <= '9' {
					d = 1
					break
				}
			}
			f["best_digit"] = d
			break
		}
	}
	// length of best chunk
	for i, c := range covs {
		if c == maxCov {
			f["best_sqrtlen"] = math.Sqrt(float64(chunks[i].n))
			break
		}
	}
	// coverage counted by weighting with term length (longer = more specific)
	var lw, lsum float64
	for _, t := range qt {
		lsum += float64(runeLen(t))
	}
	for _, ch := range chunks {
		v := 0.0
		for _, t := range qt {
			if ch.set[t] {
				v += float64(runeLen(t))
			}
		}
		if lsum > 0 && v/lsum > lw {
			lw = v / lsum
		}
	}
	f["lcov_max"] = lw
	// count of chunks with coverage >= 0.5
	c5 := 0
	for _, c := range covs {
		if c >= 0.5 {
			c5++
		}
	}
	f["n_cov50"] = float64(c5) / float64(n)
	sc := sortedDesc(covs)
	if len(sc) > 1 {
		f["cov2"] = sc[1]
	}
	if len(sc) > 2 {
		f["cov3"] = sc[2]
	}
	_, _, csd, _ := stats(covs)
	f["cov_sd"] = csd
	// title+text: best coverage among chunks whose title holds a query term
	tt := 0.0
	for i, ch := range chunks {
		hasT := false
		for _, t := range qt {
			if ch.title[t] {
				hasT = true
			}
		}
		if hasT && covs[i] > tt {
			tt = covs[i]
		}
	}
	f["titled_cov"] = tt
	// entity coverage: query words capitalised in the query (not the first word)
	var ents []string
	for i, w := range strings.FieldsFunc(r.Query, func(r rune) bool { return !(unicode.IsLetter(r) || unicode.IsDigit(r)) }) {
		rr, _ := utf8.DecodeRuneInString(w)
		if (i > 0 && unicode.IsUpper(rr)) || unicode.IsDigit(rr) {
			ents = append(ents, prefix(strings.ToLower(w), pfx))
		}
	}
	if len(ents) > 0 {
		best := 0.0
		for _, ch := range chunks {
			h := 0
			for _, e := range ents {
				if ch.set[e] {
					h++
				}
			}
			if v := float64(h) / float64(len(ents)); v > best {
				best = v
			}
		}
		f["ent_cov"] = best
		f["ent_cov2"] = best
		f["has_ent"] = 1
	} else {
		f["ent_cov"] = 1
		f["ent_cov2"] = maxCov
	}
	_ = qtAll
	return f
}

func minWindow(toks []tok, qset map[string]bool, pfx, need int) int {
	// sliding window over positions of query terms
	type hit struct {
		pos int
		t   string
	}
	var hits []hit
	for _, t := range toks {
		k := prefix(t.s, pfx)
		if qset[k] {
			hits = append(hits, hit{t.pos, k})
		}
	}
	cnt := map[string]int{}
	distinct := 0
	best := 1 << 30
	l := 0
	for r := 0; r < len(hits); r++ {
		if cnt[hits[r].t] == 0 {
			distinct++
		}
		cnt[hits[r].t]++
		for distinct == need {
			wlen := hits[r].pos - hits[l].pos + 1
			if wlen < best {
				best = wlen
			}
			cnt[hits[l].t]--
			if cnt[hits[l].t] == 0 {
				distinct--
			}
			l++
		}
	}
	if best == 1<<30 {
		return len(toks) + 1
	}
	return best
}
