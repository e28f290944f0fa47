// Package invariance is the score-convention invariance every host's tests
// check (docs/decision.md, vector_metric): for unit-length embeddings, a
// request given as cosine similarities, cosine distances, l2 distances or
// squared l2 distances, each converted exactly, must get the same action
// with a confidence within Tolerance, from every preset policy.
//
// Restate turns a request of cosine similarities into one of the other
// conventions; Requests makes requests from seeded unit-length embeddings;
// Same compares two decisions; Groups finds the golden requests restated
// from another (testdata/requests/<policy>/<base>.<metric>.json). It is
// pure Go over gate/jsonx, so the gate's tests use it under TinyGo too.
package invariance

import (
	"errors"
	"math"
	"math/rand"
	"strconv"
	"strings"

	"github.com/ctxgate/ctxgate/gate/jsonx"
	"github.com/ctxgate/ctxgate/internal/testgolden"
)

// Tolerance is how far apart the confidences of one request in two
// conventions may be.
const Tolerance = 1e-5

// Restated are the conventions a cosine request is restated in, in the
// order the golden files name them.
var Restated = []string{"cosine_distance", "l2", "l2_squared"}

// Convert is the value metric gives two unit-length embeddings whose cosine
// similarity is s: s, 1-s, sqrt(2-2s) or 2-2s (s clamped to [-1, 1] first,
// so a rounding past 1 gives no NaN).
func Convert(s float64, metric string) float64 {
	s = math.Max(-1, math.Min(1, s))
	switch metric {
	case "cosine_distance":
		return 1 - s
	case "l2":
		return math.Sqrt(2 - 2*s)
	case "l2_squared":
		return 2 - 2*s
	}
	return s
}

// Restate returns the request req (JSON, vector scores as cosine
// similarities: no vector_metric, or cosine) with every vector score converted to
// metric (Convert) and vector_metric set to it. Everything else is
// written back as it was.
func Restate(req []byte, metric string) ([]byte, error) {
	v, err := jsonx.Parse(req, 64)
	if err != nil {
		return nil, err
	}
	if v.Kind() != jsonx.Object {
		return nil, errors.New("invariance: the request is not an object")
	}
	if m := v.Get("vector_metric"); !m.IsNull() && m.Str() != "cosine" {
		return nil, errors.New("invariance: the request states vector_metric " + m.Raw())
	}
	out := append([]byte(nil), `{"vector_metric":`...)
	out = jsonx.AppendString(out, metric)
	for i := 0; i < v.Len(); i++ {
		if v.Key(i) == "vector_metric" {
			continue
		}
		out = append(out, ',')
		out = jsonx.AppendString(out, v.Key(i))
		out = append(out, ':')
		switch k, m := v.Key(i), v.Member(i); k {
		case "chunks":
			out = restateList(out, m, metric)
		case "results_per_query":
			out = append(out, '[')
			for l := 0; l < m.Len(); l++ {
				if l > 0 {
					out = append(out, ',')
				}
				out = restateList(out, m.Index(l), metric)
			}
			out = append(out, ']')
		default:
			out = jsonx.AppendValue(out, m)
		}
	}
	return append(out, '}'), nil
}

// restateList writes a chunk list with its vector scores restated.
func restateList(out []byte, list *jsonx.Value, metric string) []byte {
	if list.Kind() != jsonx.Array {
		return jsonx.AppendValue(out, list)
	}
	out = append(out, '[')
	for i := 0; i < list.Len(); i++ {
		if i > 0 {
			out = append(out, ',')
		}
		out = appendObject(out, list.Index(i), func(out []byte, key string, s *jsonx.Value) []byte {
			if key != "scores" {
				return jsonx.AppendValue(out, s)
			}
			return appendObject(out, s, func(out []byte, key string, x *jsonx.Value) []byte {
				if key == "vector" && x.Kind() == jsonx.Number {
					return strconv.AppendFloat(out, Convert(x.Float(), metric), 'g', -1, 64)
				}
				return jsonx.AppendValue(out, x)
			})
		})
	}
	return append(out, ']')
}

// appendObject writes v, an object whose members member writes (after
// the key), or any other value as it is.
func appendObject(out []byte, v *jsonx.Value, member func(out []byte, key string, m *jsonx.Value) []byte) []byte {
	if v.Kind() != jsonx.Object {
		return jsonx.AppendValue(out, v)
	}
	out = append(out, '{')
	for i := 0; i < v.Len(); i++ {
		if i > 0 {
			out = append(out, ',')
		}
		out = jsonx.AppendString(out, v.Key(i))
		out = member(append(out, ':'), v.Key(i), v.Member(i))
	}
	return append(out, '}')
}

// Restatable reports whether the request req has vector scores (whose
// conventions matter) and all are cosine similarities: it states no
// other vector_metric and every vector score is in [-1, 1].
func Restatable(req []byte) bool {
	v, err := jsonx.Parse(req, 64)
	if m := v.Get("vector_metric"); err != nil || v.Kind() != jsonx.Object || (!m.IsNull() && m.Str() != "cosine") {
		return false
	}
	lists := []*jsonx.Value{v.Get("chunks")}
	for l := 0; l < v.Get("results_per_query").Len(); l++ {
		lists = append(lists, v.Get("results_per_query").Index(l))
	}
	any := false
	for _, list := range lists {
		for i := 0; i < list.Len(); i++ {
			if x := list.Index(i).Get("scores").Get("vector"); x.Kind() == jsonx.Number {
				if f := x.Float(); f < -1 || f > 1 {
					return false
				}
				any = true
			}
		}
	}
	return any
}

// Same reports how two decisions (or error JSONs) of one request in two
// conventions differ, or nil: both errors with the same code and field, or
// both decisions with the same action and confidences within Tolerance.
func Same(a, b []byte) error {
	va, err := jsonx.Parse(a, 64)
	if err != nil {
		return err
	}
	vb, err := jsonx.Parse(b, 64)
	if err != nil {
		return err
	}
	ea, eb := va.Get("error"), vb.Get("error")
	if ea.Kind() == jsonx.Object || eb.Kind() == jsonx.Object {
		if ea.Get("code").Str() != eb.Get("code").Str() || ea.Get("field").Str() != eb.Get("field").Str() {
			return errors.New("error " + string(a) + " against " + string(b))
		}
		return nil
	}
	if x, y := va.Get("action").Str(), vb.Get("action").Str(); x != y {
		return errors.New("action " + x + " against " + y)
	}
	x, y := va.Get("confidence").Float(), vb.Get("confidence").Float()
	if math.Abs(x-y) > Tolerance {
		return errors.New("confidence " + strconv.FormatFloat(x, 'g', -1, 64) + " against " + strconv.FormatFloat(y, 'g', -1, 64))
	}
	return nil
}

// Group is a golden request and the golden requests restated from it.
type Group struct {
	Base     testgolden.Case
	Restated []testgolden.Case // one per entry of Restated, in its order
}

// Groups finds the groups among golden cases: a case named
// <base>.<metric> is <base> restated in metric. Every restated case must
// have its base and every group all of Restated.
func Groups(cases []testgolden.Case) ([]Group, error) {
	var out []Group
	for _, c := range cases {
		if strings.Contains(c.Name, ".") {
			continue
		}
		g := Group{Base: c}
		for _, m := range Restated {
			for _, r := range cases {
				if r.Policy == c.Policy && r.Name == c.Name+"."+m {
					g.Restated = append(g.Restated, r)
				}
			}
		}
		switch {
		case len(g.Restated) == len(Restated):
			out = append(out, g)
		case len(g.Restated) > 0:
			return nil, errors.New("invariance: " + c.Policy + "/" + c.Name + " is restated in some conventions, not all of " + strings.Join(Restated, ", "))
		}
	}
	for _, c := range cases {
		base, metric, ok := strings.Cut(c.Name, ".")
		if !ok {
			continue
		}
		found := false
		for _, g := range out {
			found = found || (g.Base.Policy == c.Policy && g.Base.Name == base)
		}
		if !found || !known(metric) {
			return nil, errors.New("invariance: " + c.Policy + "/" + c.Name + " restates no golden case in a convention of " + strings.Join(Restated, ", "))
		}
	}
	return out, nil
}

func known(metric string) bool {
	for _, m := range Restated {
		if m == metric {
			return true
		}
	}
	return false
}

// Requests returns n requests (JSON, vector scores as cosine
// similarities) built from seeded unit-length embeddings: a query and up
// to twelve chunks of dims dimensions, chunks nearer or farther from the
// query, with BM25 scores, texts over a small vocabulary that the query
// shares in part, and the embeddings themselves in some requests. The
// same seed gives the same bytes everywhere.
func Requests(seed int64, n int) [][]byte {
	r := rand.New(rand.NewSource(seed))
	const dims = 16
	words := strings.Fields("password reset account billing invoice refund photosynthesis light energy " +
		"chlorophyll goroutine scheduler thread kernel boils water degrees celsius sea level pressure")
	out := make([][]byte, n)
	for k := range out {
		q := unit(r, dims)
		var query []string
		for i := 0; i < 3+r.Intn(4); i++ {
			query = append(query, words[r.Intn(len(words))])
		}
		withEmb := r.Intn(3) == 0
		b := append([]byte(nil), `{"query":`...)
		b = jsonx.AppendString(b, strings.Join(query, " ")+"?")
		if withEmb {
			b = append(b, `,"query_embedding":`...)
			b = appendVector(b, q)
		}
		b = append(b, `,"chunks":[`...)
		nc := 1 + r.Intn(12)
		for i := 0; i < nc; i++ {
			// A chunk near the query: the query plus noise of a random size.
			c := make([]float64, dims)
			noise := 0.2 + 2*r.Float64()
			for j := range c {
				c[j] = q[j] + noise*r.NormFloat64()/math.Sqrt(dims)
			}
			normalize(c)
			cos := 0.0
			for j := range c {
				cos += q[j] * c[j]
			}
			var text []string
			for j := 0; j < 8+r.Intn(30); j++ {
				if r.Intn(3) == 0 {
					text = append(text, query[r.Intn(len(query))])
				} else {
					text = append(text, words[r.Intn(len(words))])
				}
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":"c`...)
			b = strconv.AppendInt(b, int64(i+1), 10)
			b = append(b, `","doc_id":"d`...)
			b = strconv.AppendInt(b, int64(r.Intn(4)), 10)
			b = append(b, `","text":`...)
			b = jsonx.AppendString(b, strings.Join(text, " ")+".")
			b = append(b, `,"scores":{"vector":`...)
			b = strconv.AppendFloat(b, cos, 'g', -1, 64)
			if r.Intn(4) > 0 {
				b = append(b, `,"bm25":`...)
				b = strconv.AppendFloat(b, math.Round(r.Float64()*2500)/100, 'g', -1, 64)
			}
			b = append(b, '}')
			if withEmb && r.Intn(2) == 0 {
				b = append(b, `,"embedding":`...)
				b = appendVector(b, c)
			}
			b = append(b, '}')
		}
		out[k] = append(b, "]}"...)
	}
	return out
}

func unit(r *rand.Rand, dims int) []float64 {
	v := make([]float64, dims)
	for i := range v {
		v[i] = r.NormFloat64()
	}
	normalize(v)
	return v
}

func normalize(v []float64) {
	n := 0.0
	for _, x := range v {
		n += x * x
	}
	n = math.Sqrt(n)
	for i := range v {
		v[i] /= n
	}
}

func appendVector(b []byte, v []float64) []byte {
	b = append(b, '[')
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, x, 'g', -1, 64)
	}
	return append(b, ']')
}
