package gate

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/ctxgate/ctxgate/gate/internal/jsonread"
	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// Policy documents are read strictly: every object rejects unknown keys, every
// error is bad_policy naming the field, and Validate then checks the rules
// that span fields. Absent optional fields take the defaults in policy.go
// (documented in docs/policy.md).

const policyMaxDepth = 16

// obj reads one object of the policy document (jsonread.Obj).
type obj = jsonread.Obj

const (
	policyFields      = "name version description signals merge order_by confidence filters bands no_chunks none_kept messages limits"
	outcomeFields     = "label level action interpretation flag"
	bandFields        = "min " + outcomeFields
	messagesFields    = "refusal_line refusal caveat fallback_prompt instructions untrusted_warning"
	limitsFields      = "max_request_bytes max_chunks max_queries max_chunk_bytes max_total_bytes max_query_bytes max_embedding_dims max_depth max_decision_bytes"
	confidenceFields  = "signal combine bias terms"
	maxPolicyDocBytes = 1 << 20
)

// decodePolicy parses, validates and hashes a policy document. The sha256 is
// over the canonical JSON (jsonx.AppendCanonical), so formatting and key
// order do not change a policy's identity.
func decodePolicy(data []byte) (*Policy, PolicyRef, error) {
	if len(data) > maxPolicyDocBytes {
		return nil, PolicyRef{}, errorf(CodeBadPolicy, "", "policy is larger than 1 MiB")
	}
	doc, perr := jsonread.ParseJSON(data, policyMaxDepth)
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
	top, err := jsonread.AsObject(doc, jsonread.Root, CodeBadPolicy)
	if err != nil {
		return nil, err
	}
	if err := top.Strict(policyFields); err != nil {
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
	if p.Name, _, err = top.Str("name", true); err != nil {
		return nil, err
	}
	if p.Version, _, err = top.Str("version", true); err != nil {
		return nil, err
	}
	if p.Description, _, err = top.Str("description", false); err != nil {
		return nil, err
	}
	if err := readSignals(p, top); err != nil {
		return nil, err
	}
	if m, ok, err := top.Object("merge", false); err != nil {
		return nil, err
	} else if ok {
		if err := m.Strict("max_results"); err != nil {
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
	if f, ok, err := top.Object("filters", false); err != nil {
		return nil, err
	} else if ok {
		if err := f.Strict("quality_min evidence_floor relevance_min"); err != nil {
			return nil, err
		}
		if p.Filters.QualityMin, p.Filters.HasQualityMin, err = f.Num("quality_min", false); err != nil {
			return nil, err
		}
		if p.Filters.EvidenceFloor, p.Filters.HasEvidenceFloor, err = f.Num("evidence_floor", false); err != nil {
			return nil, err
		}
		if p.Filters.RelevanceMin, p.Filters.HasRelevanceMin, err = f.Num("relevance_min", false); err != nil {
			return nil, err
		}
	}
	bands, _, err := top.Arr("bands", true)
	if err != nil {
		return nil, err
	}
	at := jsonread.Root.Key("bands")
	for i, n := 0, bands.Len(); i < n; i++ {
		b, err := jsonread.AsObject(bands.Index(i), at.Index(i), CodeBadPolicy)
		if err != nil {
			return nil, err
		}
		if err := b.Strict(bandFields); err != nil {
			return nil, err
		}
		var band Band
		if band.Min, _, err = b.Num("min", true); err != nil {
			return nil, err
		}
		if err := readOutcome(b, &band.Outcome, true); err != nil {
			return nil, err
		}
		p.Bands = append(p.Bands, band)
	}
	for _, k := range [...]string{"no_chunks", "none_kept"} {
		o, ok, err := top.Object(k, false)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if err := o.Strict(outcomeFields); err != nil {
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
	if l, ok, err := top.Object("limits", false); err != nil {
		return nil, err
	} else if ok {
		if err := l.Strict(limitsFields); err != nil {
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
	v, ok, err := o.Num(key, false)
	if err != nil || !ok {
		return err
	}
	if v != float64(int64(v)) || v < -1e15 || v > 1e15 {
		return o.Fail(key, "must be an integer")
	}
	*dst = int(v)
	return nil
}

// readNum reads an optional number member into *dst (unchanged if absent).
func readNum(o obj, key string, dst *float64) *Error {
	v, ok, err := o.Num(key, false)
	if err != nil || !ok {
		return err
	}
	*dst = v
	return nil
}

// readBool reads an optional boolean member into *dst (unchanged if absent).
func readBool(o obj, key string, dst *bool) *Error {
	v, ok, err := o.Bool(key, false)
	if err != nil || !ok {
		return err
	}
	*dst = v
	return nil
}

// readOrderBy reads order_by: one ordering as a string, or an array of them
// tried in turn (the first whose inputs the request has decides).
func readOrderBy(p *Policy, top obj) *Error {
	v, err := top.Get("order_by", false)
	if err != nil || v == nil {
		return err
	}
	at := top.At().Key("order_by")
	switch v.Kind() {
	case jsonx.String:
		p.OrderBy = []string{v.Str()}
	case jsonx.Array:
		if v.Len() > maxOrderBy {
			return errorf(CodeBadPolicy, at.String(), "must name at most 8 orderings")
		}
		list, err := jsonread.Strs(v, at, CodeBadPolicy)
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
	c, _, err := top.Object("confidence", true)
	if err != nil {
		return err
	}
	if err := c.Strict(confidenceFields); err != nil {
		return err
	}
	conf := &p.Confidence
	if conf.Signal, _, err = c.Str("signal", false); err != nil {
		return err
	}
	if conf.Combine, _, err = c.Str("combine", false); err != nil {
		return err
	}
	if err := readNum(c, "bias", &conf.Bias); err != nil {
		return err
	}
	terms, ok, err := c.Arr("terms", false)
	if err != nil || !ok {
		return err
	}
	at := c.At().Key("terms")
	for i, n := 0, terms.Len(); i < n; i++ {
		t, err := jsonread.AsObject(terms.Index(i), at.Index(i), CodeBadPolicy)
		if err != nil {
			return err
		}
		if err := t.Strict("signal weight missing"); err != nil {
			return err
		}
		var term Term
		if term.Signal, _, err = t.Str("signal", true); err != nil {
			return err
		}
		if term.Weight, _, err = t.Num("weight", true); err != nil {
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
	if s, ok, err = o.Str("label", required); err != nil {
		return err
	} else if ok {
		dst.Label = s
	}
	if s, ok, err = o.Str("level", required); err != nil {
		return err
	} else if ok {
		dst.Level = Level(s)
	}
	if s, ok, err = o.Str("action", required); err != nil {
		return err
	} else if ok {
		dst.Action = Action(s)
	}
	if s, ok, err = o.Str("interpretation", false); err != nil {
		return err
	} else if ok {
		dst.Interpretation = s
	}
	return readBool(o, "flag", &dst.Flag)
}

func readMessages(p *Policy, top obj) *Error {
	m, ok, err := top.Object("messages", false)
	if err != nil || !ok {
		return err
	}
	if err := m.Strict(messagesFields); err != nil {
		return err
	}
	msg := &p.Messages
	for _, f := range [...]struct {
		k string
		v *string
	}{{"refusal_line", &msg.RefusalLine}, {"refusal", &msg.Refusal}, {"caveat", &msg.Caveat},
		{"fallback_prompt", &msg.FallbackPrompt}, {"untrusted_warning", &msg.UntrustedWarning}} {
		s, ok, err := m.Str(f.k, false)
		if err != nil {
			return err
		}
		if ok {
			*f.v = s
		}
	}
	ins, ok, err := m.Arr("instructions", false)
	if err != nil || !ok {
		return err
	}
	at := m.At().Key("instructions")
	if ins.Len() != 4 {
		return errorf(CodeBadPolicy, at.String(), "must hold exactly 4 instructions")
	}
	list, err := jsonread.Strs(ins, at, CodeBadPolicy)
	if err != nil {
		return err
	}
	copy(msg.Instructions[:], list)
	return nil
}
