package calibrate

import (
	"math"
	"math/rand"
	"strconv"
	"strings"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/policies"
)

// world draws synthetic requests whose answerability follows a known
// logistic model over the gate's own features: truth = scale × (the
// default text model's log-odds) + vector × top_vector + bias. Requests
// carry vector scores only, so the text model decides them.
type world struct {
	r                   *rand.Rand
	def                 *gate.Engine
	scale, vector, bias float64
	vecLo, vecHi        float64 // the best chunk's cosine, uniform
	nextID              int
}

func newWorld(seed int64, scale, vector, bias float64) *world {
	e, err := gate.NewEngine(policies.Default())
	if err != nil {
		panic(err)
	}
	return &world{r: rand.New(rand.NewSource(seed)), def: e, scale: scale, vector: vector, bias: bias, vecLo: 0.3, vecHi: 0.95}
}

func (w *world) word(prefix string, n int) string { return prefix + strconv.Itoa(w.r.Intn(n)) }

// request is a query of four distinct terms and three chunks, each
// holding some of them among filler words, from one of three documents.
func (w *world) request() *gate.Request {
	perm := w.r.Perm(60)
	terms := make([]string, 4)
	for i := range terms {
		terms[i] = "term" + strconv.Itoa(perm[i])
	}
	req := &gate.Request{Query: strings.Join(terms, " ")}
	top := w.vecLo + (w.vecHi-w.vecLo)*w.r.Float64()
	for c := 0; c < 3; c++ {
		var words []string
		for _, t := range terms {
			if w.r.Float64() < 0.5 {
				words = append(words, t)
			}
		}
		for f := 5 + w.r.Intn(10); f > 0; f-- {
			words = append(words, w.word("filler", 400))
		}
		w.r.Shuffle(len(words), func(i, j int) { words[i], words[j] = words[j], words[i] })
		w.nextID++
		ch := gate.Chunk{ID: "c" + strconv.Itoa(w.nextID), DocID: w.word("doc", 3), Text: strings.Join(words, " ")}
		ch.Scores.Vector, ch.Scores.HasVector = top-0.1*float64(c)*w.r.Float64(), true
		req.Chunks = append(req.Chunks, ch)
	}
	return req
}

// truth is the true log-odds of a request.
func (w *world) truth(req *gate.Request) float64 {
	fs, _, err := w.def.AnswerabilityFeatures(req)
	if err != nil {
		panic(err)
	}
	var f [nf]float64
	for i, s := range fs {
		f[i] = s.Value
	}
	return w.scale*logitOf(&w.def.Policy().Answerability.Text, &f) + w.vector*f[featTopVector] + w.bias
}

// examples draws n labeled examples, each its own group.
func (w *world) examples(n int) []Example {
	out := make([]Example, n)
	for i := range out {
		req := w.request()
		out[i] = Example{Request: req, Label: w.r.Float64() < 1/(1+math.Exp(-w.truth(req)))}
	}
	return out
}
