package calibrate

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/ctxgate/ctxgate/gate"
)

// base is the policy calibration starts from.
type base struct {
	json   []byte
	engine *gate.Engine
	policy *gate.Policy
	cfg    *gate.AnswerabilityConfig
	// answerMin is the min of the lowest band that answers (inject or
	// caveat): the calibrated threshold lands on it. injectMin is the
	// lowest inject band's min, -1 when none.
	answerMin, injectMin float64
}

// loadBase checks that the base decides by signals.answerability through
// bands that answer above one confidence and withhold below it.
func loadBase(doc []byte, d gate.Defaults) (*base, error) {
	e, err := newEngine(doc, d)
	if err != nil {
		return nil, errors.New("base policy: " + err.Error())
	}
	p := e.Policy()
	b := &base{json: doc, engine: e, policy: p, cfg: p.Answerability, answerMin: -1, injectMin: -1}
	if p.Answerability == nil || p.Confidence.Signal != gate.SigAnswerability {
		return nil, errors.New("base policy " + p.Name + ": calibration needs one whose confidence is signals.answerability (" +
			`"confidence": {"signal": "answerability"}, as the default has)`)
	}
	withholds := false
	for _, band := range p.Bands {
		if answers(band.Action) {
			if withholds {
				return nil, errors.New("base policy " + p.Name + ": a band that answers sits below one that withholds; calibration needs bands that answer above one confidence and withhold below it")
			}
			b.answerMin = band.Min
			if band.Action == gate.ActionInject {
				b.injectMin = band.Min
			}
		} else {
			withholds = true
		}
	}
	if b.answerMin <= 0 || !withholds {
		return nil, errors.New("base policy " + p.Name + ": calibration needs a band that answers (inject or caveat) above 0 and one below it that withholds (fallback or refuse)")
	}
	return b, nil
}

// member is one key of a JSON object with its value's bytes as written.
type member struct {
	key string
	val json.RawMessage
}

// members reads a JSON object's members in order, values verbatim.
func members(doc []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var out []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, member{t.(string), v})
	}
	return out, nil
}

// written is what calibration changes in the base.
type written struct {
	name, version, description string
	text, scored               gate.AnswerabilityModel
	bm25Sat, sparseSat         float64
	// vectorCenter, vectorScale place top_vector on the deployment's own
	// scale (vector_center, vector_scale); a scale of 0 writes neither.
	vectorCenter, vectorScale float64
}

// writePolicy is the base document with its name, version, description
// and signals.answerability replaced, every other member as the base
// writes it (same order, same bytes), so a diff against the base shows
// exactly what calibration changed.
func writePolicy(b *base, w *written) ([]byte, error) {
	top, err := members(b.json)
	if err != nil {
		return nil, errors.New("base policy: " + err.Error())
	}
	set := func(ms []member, key string, val []byte, after string) []member {
		for i := range ms {
			if ms[i].key == key {
				ms[i].val = val
				return ms
			}
		}
		for i := range ms {
			if ms[i].key == after {
				return append(ms[:i+1], append([]member{{key, val}}, ms[i+1:]...)...)
			}
		}
		return append([]member{{key, val}}, ms...)
	}
	top = set(top, "name", jsonString(w.name), "")
	top = set(top, "version", jsonString(w.version), "name")
	top = set(top, "description", jsonString(w.description), "version")
	var out bytes.Buffer
	out.WriteString("{\n")
	for i, m := range top {
		out.WriteString("  " + string(jsonString(m.key)) + ": ")
		if m.key == "signals" {
			sig, err := members(m.val)
			if err != nil {
				return nil, errors.New("base policy: signals: " + err.Error())
			}
			sig = set(sig, "answerability", answerabilityJSON(b.cfg, w), "")
			out.WriteString("{\n")
			for j, s := range sig {
				out.WriteString("    " + string(jsonString(s.key)) + ": ")
				out.Write(s.val)
				if j < len(sig)-1 {
					out.WriteByte(',')
				}
				out.WriteByte('\n')
			}
			out.WriteString("  }")
		} else {
			out.Write(m.val)
		}
		if i < len(top)-1 {
			out.WriteByte(',')
		}
		out.WriteByte('\n')
	}
	out.WriteString("}\n")
	return out.Bytes(), nil
}

// answerabilityJSON writes signals.answerability in the default policy's
// layout: one line per model, weights in FeatureNames order.
func answerabilityJSON(cfg *gate.AnswerabilityConfig, w *written) []byte {
	var b strings.Builder
	b.WriteString("{\n")
	model := func(name string, m *gate.AnswerabilityModel) {
		b.WriteString(`      "` + name + `": {"bias": ` + num(m.Bias) + `, "weights": {`)
		first := true
		for i, u := range m.Used {
			if !u {
				continue
			}
			if !first {
				b.WriteString(", ")
			}
			first = false
			b.WriteString(`"` + gate.FeatureNames[i] + `": ` + num(m.Weights[i]))
		}
		b.WriteString("}},\n")
	}
	model("text", &w.text)
	if cfg.HasScored {
		model("scored", &w.scored)
	}
	b.WriteString(`      "scored_min_term_coverage": ` + num(cfg.ScoredMinCoverage) + ",\n")
	b.WriteString(`      "bm25_saturation": ` + num(w.bm25Sat) + ",\n")
	if w.vectorScale > 0 {
		b.WriteString(`      "vector_center": ` + num(w.vectorCenter) + ",\n")
		b.WriteString(`      "vector_scale": ` + num(w.vectorScale) + ",\n")
	}
	b.WriteString(`      "sparse_saturation": ` + num(w.sparseSat) + "\n")
	b.WriteString("    }")
	return []byte(b.String())
}

// num writes x in the fewest digits that read back as x.
func num(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// show writes x for people: at most 6 significant digits, so that 1-0.9
// reads 0.1.
func show(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }

func jsonString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return bytes.TrimRight(b.Bytes(), "\n")
}

func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }

func logit(p float64) float64 { return math.Log(p / (1 - p)) }

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// newEngine is a gate for policy doc applying the score conventions d to
// requests that state none.
func newEngine(doc []byte, d gate.Defaults) (*gate.Engine, error) {
	e, err := gate.NewEngine(doc)
	if err != nil {
		return nil, err
	}
	if err := e.SetDefaults(d); err != nil {
		return nil, err
	}
	return e, nil
}
