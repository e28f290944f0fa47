package gate

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// Policy documents are read strictly: every object rejects unknown keys, every
// error is bad_policy naming the field, and Validate then checks the rules
// that span fields. Absent optional fields take the defaults in policy.go
// (documented in docs/policy.md).

const policyMaxDepth = 16

const (
	policyFields      = "name version description signals merge order_by confidence filters bands no_chunks none_kept messages limits"
	signalsFields     = "similarity quality sufficiency evidence retrieval answer_coverage chunk_relevance answerability"
	outcomeFields     = "label level action interpretation flag"
	bandFields        = "min " + outcomeFields
	messagesFields    = "refusal_line refusal caveat fallback_prompt instructions untrusted_warning"
	limitsFields      = "max_request_bytes max_chunks max_queries max_chunk_bytes max_total_bytes max_query_bytes max_embedding_dims max_depth max_decision_bytes"
	confidenceFields  = "signal combine bias terms"
	evidenceFields    = "rrf_k low_confidence weights bm25_saturation default_trust freshness"
	maxPolicyDocBytes = 1 << 20
)

// decodePolicy parses, validates and hashes a policy document. The sha256 is
// over the canonical JSON (jsonx.AppendCanonical), so formatting and key
// order do not change a policy's identity.
func decodePolicy(data []byte) (*Policy, PolicyRef, error) {
	if len(data) > maxPolicyDocBytes {
		return nil, PolicyRef{}, errorf(CodeBadPolicy, "", "policy is larger than 1 MiB")
	}
	doc, perr := parseJSON(data, policyMaxDepth)
	if perr != nil {
		return nil, PolicyRef{}, errorf(CodeBadPolicy, "", perr.Message)
	}
	p, err := DecodePolicyValue(&doc)
	if err != nil {
		return nil, PolicyRef{}, err
	}
	sum := sha256.Sum256(jsonx.AppendCanonical(nil, &doc))
	return p, PolicyRef{Name: p.Name, Version: p.Version, SHA256: hex.EncodeToString(sum[:])}, nil
}

// DecodePolicy parses and validates a policy document.
func DecodePolicy(data []byte) (*Policy, error) {
	p, _, err := decodePolicy(data)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// DecodePolicyValue reads an already-parsed policy document.
func DecodePolicyValue(doc *jsonx.Value) (*Policy, error) {
	p, err := readPolicy(doc)
	if err != nil {
		return nil, err
	}
	if verr := p.Validate(); verr != nil {
		return nil, verr
	}
	return p, nil
}

func readPolicy(doc *jsonx.Value) (*Policy, *Error) {
	top, err := asObject(doc, root, CodeBadPolicy)
	if err != nil {
		return nil, err
	}
	if err := top.strict(policyFields); err != nil {
		return nil, err
	}
	p := &Policy{
		Merge:    MergeConfig{MaxResults: 5},
		OrderBy:  []string{OrderRetrieval},
		NoChunks: defaultNoChunks(),
		NoneKept: defaultNoneKept(),
		Messages: DefaultMessages(),
		Limits:   DefaultLimits(),
	}
	if p.Name, _, err = top.str("name", true); err != nil {
		return nil, err
	}
	if p.Version, _, err = top.str("version", true); err != nil {
		return nil, err
	}
	if p.Description, _, err = top.str("description", false); err != nil {
		return nil, err
	}
	if err := readSignals(p, top); err != nil {
		return nil, err
	}
	if m, ok, err := top.object("merge", false); err != nil {
		return nil, err
	} else if ok {
		if err := m.strict("max_results"); err != nil {
			return nil, err
		}
		if err := readInt(m, "max_results", &p.Merge.MaxResults); err != nil {
			return nil, err
		}
	}
	if err := readOrderBy(p, top); err != nil {
		return nil, err
	}
	if err := readConfidence(p, top); err != nil {
		return nil, err
	}
	if f, ok, err := top.object("filters", false); err != nil {
		return nil, err
	} else if ok {
		if err := f.strict("quality_min evidence_floor relevance_min"); err != nil {
			return nil, err
		}
		if p.Filters.QualityMin, p.Filters.HasQualityMin, err = f.num("quality_min", false); err != nil {
			return nil, err
		}
		if p.Filters.EvidenceFloor, p.Filters.HasEvidenceFloor, err = f.num("evidence_floor", false); err != nil {
			return nil, err
		}
		if p.Filters.RelevanceMin, p.Filters.HasRelevanceMin, err = f.num("relevance_min", false); err != nil {
			return nil, err
		}
	}
	bands, _, err := top.arr("bands", true)
	if err != nil {
		return nil, err
	}
	at := root.key("bands")
	for i, n := 0, bands.Len(); i < n; i++ {
		b, err := asObject(bands.Index(i), at.index(i), CodeBadPolicy)
		if err != nil {
			return nil, err
		}
		if err := b.strict(bandFields); err != nil {
			return nil, err
		}
		var band Band
		if band.Min, _, err = b.num("min", true); err != nil {
			return nil, err
		}
		if err := readOutcome(b, &band.Outcome, true); err != nil {
			return nil, err
		}
		p.Bands = append(p.Bands, band)
	}
	for _, k := range [...]string{"no_chunks", "none_kept"} {
		o, ok, err := top.object(k, false)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if err := o.strict(outcomeFields); err != nil {
			return nil, err
		}
		dst := &p.NoChunks
		if k == "none_kept" {
			dst = &p.NoneKept
		}
		if err := readOutcome(o, dst, false); err != nil {
			return nil, err
		}
	}
	if err := readMessages(p, top); err != nil {
		return nil, err
	}
	if l, ok, err := top.object("limits", false); err != nil {
		return nil, err
	} else if ok {
		if err := l.strict(limitsFields); err != nil {
			return nil, err
		}
		lim := &p.Limits
		for _, f := range [...]struct {
			k string
			v *int
		}{{"max_request_bytes", &lim.MaxRequestBytes}, {"max_chunks", &lim.MaxChunks},
			{"max_queries", &lim.MaxQueries}, {"max_chunk_bytes", &lim.MaxChunkBytes},
			{"max_total_bytes", &lim.MaxTotalBytes}, {"max_query_bytes", &lim.MaxQueryBytes},
			{"max_embedding_dims", &lim.MaxEmbeddingDims}, {"max_depth", &lim.MaxDepth},
			{"max_decision_bytes", &lim.MaxDecisionBytes}} {
			if err := readInt(l, f.k, f.v); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

// readInt reads an optional integer member into *dst (unchanged if absent).
func readInt(o obj, key string, dst *int) *Error {
	v, ok, err := o.num(key, false)
	if err != nil || !ok {
		return err
	}
	if v != float64(int64(v)) || v < -1e15 || v > 1e15 {
		return o.fail(key, "must be an integer")
	}
	*dst = int(v)
	return nil
}

// readNum reads an optional number member into *dst (unchanged if absent).
func readNum(o obj, key string, dst *float64) *Error {
	v, ok, err := o.num(key, false)
	if err != nil || !ok {
		return err
	}
	*dst = v
	return nil
}

// readBool reads an optional boolean member into *dst (unchanged if absent).
func readBool(o obj, key string, dst *bool) *Error {
	v, ok, err := o.boolean(key, false)
	if err != nil || !ok {
		return err
	}
	*dst = v
	return nil
}

func readSignals(p *Policy, top obj) *Error {
	s, ok, err := top.object("signals", false)
	if err != nil || !ok {
		return err
	}
	if err := s.strict(signalsFields); err != nil {
		return err
	}
	if o, ok, err := s.object("similarity", false); err != nil {
		return err
	} else if ok {
		if err := o.strict(""); err != nil {
			return err
		}
		p.Similarity = &SimilarityConfig{}
	}
	if o, ok, err := s.object("quality", false); err != nil {
		return err
	} else if ok {
		if err := o.strict("stub_words"); err != nil {
			return err
		}
		q := defaultQuality()
		if err := readInt(o, "stub_words", &q.StubWords); err != nil {
			return err
		}
		p.Quality = &q
	}
	if o, ok, err := s.object("sufficiency", false); err != nil {
		return err
	} else if ok {
		if err := o.strict("min_contexts default_temperature min_term_runes"); err != nil {
			return err
		}
		c := defaultSufficiency()
		if err := readInt(o, "min_contexts", &c.MinContexts); err != nil {
			return err
		}
		if err := readNum(o, "default_temperature", &c.DefaultTemperature); err != nil {
			return err
		}
		if err := readInt(o, "min_term_runes", &c.MinTermRunes); err != nil {
			return err
		}
		p.Sufficiency = &c
	}
	if o, ok, err := s.object("evidence", false); err != nil {
		return err
	} else if ok {
		if err := o.strict(evidenceFields); err != nil {
			return err
		}
		c := defaultEvidence()
		for _, f := range [...]struct {
			k string
			v *float64
		}{{"rrf_k", &c.RRFK}, {"low_confidence", &c.LowConfidence},
			{"bm25_saturation", &c.BM25Saturation}, {"default_trust", &c.DefaultTrust}} {
			if err := readNum(o, f.k, f.v); err != nil {
				return err
			}
		}
		if wts, ok, err := o.object("weights", false); err != nil {
			return err
		} else if ok {
			if err := wts.strict("vector bm25 coverage fused"); err != nil {
				return err
			}
			// Given weights replace the defaults as a set: an absent one is 0.
			c.VectorWeight, c.BM25Weight, c.CoverageWeight, c.FusedWeight = 0, 0, 0, 0
			for _, f := range [...]struct {
				k string
				v *float64
			}{{"vector", &c.VectorWeight}, {"bm25", &c.BM25Weight}, {"coverage", &c.CoverageWeight}, {"fused", &c.FusedWeight}} {
				if err := readNum(wts, f.k, f.v); err != nil {
					return err
				}
			}
		}
		if fr, ok, err := o.object("freshness", false); err != nil {
			return err
		} else if ok {
			if err := fr.strict("decay days"); err != nil {
				return err
			}
			if c.Decay, _, err = fr.str("decay", true); err != nil {
				return err
			}
			if c.DecayDays, _, err = fr.num("days", true); err != nil {
				return err
			}
		}
		p.Evidence = &c
	}
	if o, ok, err := s.object("retrieval", false); err != nil {
		return err
	} else if ok {
		if err := o.strict("consensus_threshold raw_scores rag_confidence"); err != nil {
			return err
		}
		c := defaultRetrieval()
		if err := readNum(o, "consensus_threshold", &c.ConsensusThreshold); err != nil {
			return err
		}
		if err := readBool(o, "raw_scores", &c.RawScores); err != nil {
			return err
		}
		if err := readBool(o, "rag_confidence", &c.Report); err != nil {
			return err
		}
		p.Retrieval = &c
	}
	if o, ok, err := s.object("answer_coverage", false); err != nil {
		return err
	} else if ok {
		if err := o.strict("bias coverage sqrt_tokens"); err != nil {
			return err
		}
		c := defaultAnswerCoverage()
		for _, f := range [...]struct {
			k string
			v *float64
		}{{"bias", &c.Bias}, {"coverage", &c.Coverage}, {"sqrt_tokens", &c.SqrtTokens}} {
			if err := readNum(o, f.k, f.v); err != nil {
				return err
			}
		}
		p.AnswerCoverage = &c
	}
	if o, ok, err := s.object("chunk_relevance", false); err != nil {
		return err
	} else if ok {
		// above_low (default policy version 2) is gone on purpose: it made
		// the score depend on how many chunks a request carries, and a policy
		// still setting it would mix its old weights with new defaults.
		if v, _ := o.get("above_low", false); v != nil {
			return o.fail("above_low", "was removed (it tied the score to the number of chunks); use vector, below_top, both, missing_gap")
		}
		if err := o.strict("bias vector below_top both missing_gap"); err != nil {
			return err
		}
		c := defaultChunkRelevance()
		for _, f := range [...]struct {
			k string
			v *float64
		}{{"bias", &c.Bias}, {"vector", &c.Vector}, {"below_top", &c.BelowTop}, {"both", &c.Both},
			{"missing_gap", &c.MissingGap}} {
			if err := readNum(o, f.k, f.v); err != nil {
				return err
			}
		}
		p.ChunkRelevance = &c
	}
	if o, ok, err := s.object("answerability", false); err != nil {
		return err
	} else if ok {
		c, err := readAnswerability(o)
		if err != nil {
			return err
		}
		p.Answerability = c
	}
	return nil
}

// readAnswerability reads signals.answerability: the text model (required),
// the scored model, and the two saturations.
func readAnswerability(o obj) (*AnswerabilityConfig, *Error) {
	if err := o.strict("text scored scored_min_term_coverage bm25_saturation sparse_saturation"); err != nil {
		return nil, err
	}
	c := defaultAnswerability()
	t, _, err := o.object("text", true)
	if err != nil {
		return nil, err
	}
	if err := readAnswerabilityModel(t, &c.Text); err != nil {
		return nil, err
	}
	if m, ok, err := o.object("scored", false); err != nil {
		return nil, err
	} else if ok {
		if err := readAnswerabilityModel(m, &c.Scored); err != nil {
			return nil, err
		}
		c.HasScored = true
	}
	if err := readNum(o, "scored_min_term_coverage", &c.ScoredMinCoverage); err != nil {
		return nil, err
	}
	if err := readNum(o, "bm25_saturation", &c.BM25Saturation); err != nil {
		return nil, err
	}
	if err := readNum(o, "sparse_saturation", &c.SparseSaturation); err != nil {
		return nil, err
	}
	return &c, nil
}

// readAnswerabilityModel reads {"bias": b, "weights": {"feature": w, ...}};
// a weight names one of FeatureNames.
func readAnswerabilityModel(o obj, m *AnswerabilityModel) *Error {
	if err := o.strict("bias weights"); err != nil {
		return err
	}
	if err := readNum(o, "bias", &m.Bias); err != nil {
		return err
	}
	ws, ok, err := o.object("weights", true)
	if err != nil || !ok {
		return err
	}
	for i, n := 0, ws.v.Len(); i < n; i++ {
		k := ws.v.Key(i)
		f := featureIndex(k)
		if f < 0 {
			return ws.fail(k, "unknown feature (want one of "+featureList()+")")
		}
		if err := readNum(ws, k, &m.Weights[f]); err != nil {
			return err
		}
		m.Used[f] = true
	}
	return nil
}

func featureList() string {
	s := ""
	for i, n := range FeatureNames {
		if i > 0 {
			s += ", "
		}
		s += n
	}
	return s
}

// readOrderBy reads order_by: one ordering as a string, or an array of them
// tried in turn (the first whose inputs the request has decides).
func readOrderBy(p *Policy, top obj) *Error {
	v, err := top.get("order_by", false)
	if err != nil || v == nil {
		return err
	}
	at := top.at.key("order_by")
	switch v.Kind() {
	case jsonx.String:
		p.OrderBy = []string{v.Str()}
	case jsonx.Array:
		if v.Len() > maxOrderBy {
			return errorf(CodeBadPolicy, at.String(), "must name at most 8 orderings")
		}
		list, err := strs(v, at, CodeBadPolicy)
		if err != nil {
			return err
		}
		p.OrderBy = list
	default:
		return errorf(CodeBadPolicy, at.String(), "must be a string or an array of strings")
	}
	return nil
}

func readConfidence(p *Policy, top obj) *Error {
	c, _, err := top.object("confidence", true)
	if err != nil {
		return err
	}
	if err := c.strict(confidenceFields); err != nil {
		return err
	}
	conf := &p.Confidence
	if conf.Signal, _, err = c.str("signal", false); err != nil {
		return err
	}
	if conf.Combine, _, err = c.str("combine", false); err != nil {
		return err
	}
	if err := readNum(c, "bias", &conf.Bias); err != nil {
		return err
	}
	terms, ok, err := c.arr("terms", false)
	if err != nil || !ok {
		return err
	}
	at := c.at.key("terms")
	for i, n := 0, terms.Len(); i < n; i++ {
		t, err := asObject(terms.Index(i), at.index(i), CodeBadPolicy)
		if err != nil {
			return err
		}
		if err := t.strict("signal weight missing"); err != nil {
			return err
		}
		var term Term
		if term.Signal, _, err = t.str("signal", true); err != nil {
			return err
		}
		if term.Weight, _, err = t.num("weight", true); err != nil {
			return err
		}
		if err := readNum(t, "missing", &term.Missing); err != nil {
			return err
		}
		conf.Terms = append(conf.Terms, term)
	}
	return nil
}

func readOutcome(o obj, dst *Outcome, required bool) *Error {
	var err *Error
	var s string
	var ok bool
	if s, ok, err = o.str("label", required); err != nil {
		return err
	} else if ok {
		dst.Label = s
	}
	if s, ok, err = o.str("level", required); err != nil {
		return err
	} else if ok {
		dst.Level = Level(s)
	}
	if s, ok, err = o.str("action", required); err != nil {
		return err
	} else if ok {
		dst.Action = Action(s)
	}
	if s, ok, err = o.str("interpretation", false); err != nil {
		return err
	} else if ok {
		dst.Interpretation = s
	}
	return readBool(o, "flag", &dst.Flag)
}

func readMessages(p *Policy, top obj) *Error {
	m, ok, err := top.object("messages", false)
	if err != nil || !ok {
		return err
	}
	if err := m.strict(messagesFields); err != nil {
		return err
	}
	msg := &p.Messages
	for _, f := range [...]struct {
		k string
		v *string
	}{{"refusal_line", &msg.RefusalLine}, {"refusal", &msg.Refusal}, {"caveat", &msg.Caveat},
		{"fallback_prompt", &msg.FallbackPrompt}, {"untrusted_warning", &msg.UntrustedWarning}} {
		s, ok, err := m.str(f.k, false)
		if err != nil {
			return err
		}
		if ok {
			*f.v = s
		}
	}
	ins, ok, err := m.arr("instructions", false)
	if err != nil || !ok {
		return err
	}
	at := m.at.key("instructions")
	if ins.Len() != 4 {
		return errorf(CodeBadPolicy, at.String(), "must hold exactly 4 instructions (seed 003)")
	}
	list, err := strs(ins, at, CodeBadPolicy)
	if err != nil {
		return err
	}
	copy(msg.Instructions[:], list)
	return nil
}
