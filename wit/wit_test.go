package wit

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/gate/wire"
	"github.com/ctxgate/ctxgate/host"
	"github.com/ctxgate/ctxgate/internal/testenv"
	"github.com/ctxgate/ctxgate/policies"
	"github.com/tetratelabs/wazero"
)

// ---- A parser for the WIT subset this file uses: records, enums, exports. ----

type witField struct{ name, typ string }

type witFile struct {
	records map[string][]witField
	enums   map[string][]string
	exports map[string]string // name -> signature
}

var (
	lineComment = regexp.MustCompile(`//[^\n]*`)
	blockRe     = regexp.MustCompile(`(?s)\b(record|enum)\s+(%?[a-z][a-z0-9-]*)\s*\{(.*?)\}`)
	exportRe    = regexp.MustCompile(`\bexport\s+(%?[a-z][a-z0-9-]*)\s*:\s*(func\([^;]*\)[^;]*);`)
)

func parseWIT(t *testing.T, src string) witFile {
	t.Helper()
	src = lineComment.ReplaceAllString(src, "")
	f := witFile{records: map[string][]witField{}, enums: map[string][]string{}, exports: map[string]string{}}
	for _, m := range blockRe.FindAllStringSubmatch(src, -1) {
		kind, name, body := m[1], unescape(m[2]), m[3]
		for _, item := range splitTop(body) {
			if kind == "enum" {
				f.enums[name] = append(f.enums[name], unescape(item))
				continue
			}
			fname, typ, ok := strings.Cut(item, ":")
			if !ok {
				t.Fatalf("record %s: cannot read field %q", name, item)
			}
			f.records[name] = append(f.records[name], witField{unescape(strings.TrimSpace(fname)), strings.Join(strings.Fields(typ), "")})
		}
	}
	for _, m := range exportRe.FindAllStringSubmatch(src, -1) {
		f.exports[unescape(m[1])] = strings.Join(strings.Fields(m[2]), " ")
	}
	return f
}

// splitTop splits on commas outside <...> and drops empty items (a trailing
// comma is allowed).
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '<':
			depth++
		case '>':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	out = append(out, s[start:])
	items := out[:0]
	for _, it := range out {
		if it = strings.TrimSpace(it); it != "" {
			items = append(items, it)
		}
	}
	return items
}

// unescape drops WIT's keyword escape: %type is the identifier type.
func unescape(s string) string { return strings.TrimPrefix(strings.TrimSpace(s), "%") }

// ---- The mapping from Go to WIT. ----

// goRecords pairs each WIT record with its Go type. input records are
// decoded leniently: every field is optional except the required ones.
var goRecords = []struct {
	wit      string
	typ      reflect.Type
	input    bool
	required []string // input fields that are not option<...>
}{
	{"request", reflect.TypeOf(gate.Request{}), true, []string{"query"}},
	{"chunk", reflect.TypeOf(gate.Chunk{}), true, nil},
	{"scores", reflect.TypeOf(gate.Scores{}), true, nil},
	{"answer", reflect.TypeOf(gate.Answer{}), true, []string{"answer"}},
	{"decision", reflect.TypeOf(gate.Decision{}), false, nil},
	{"signal", reflect.TypeOf(gate.Signal{}), false, nil},
	{"warning", reflect.TypeOf(gate.Warning{}), false, nil},
	{"rag-confidence", reflect.TypeOf(gate.RAGConfidence{}), false, nil},
	{"chunk-outcome", reflect.TypeOf(gate.ChunkOutcome{}), false, nil},
	{"prompt", reflect.TypeOf(gate.Prompt{}), false, nil},
	{"refusal", reflect.TypeOf(gate.Refusal{}), false, nil},
	{"gap-event", reflect.TypeOf(gate.GapEvent{}), false, nil},
	{"gap-chunk", reflect.TypeOf(gate.GapChunk{}), false, nil},
	{"policy-ref", reflect.TypeOf(gate.PolicyRef{}), false, nil},
	{"validation", reflect.TypeOf(gate.Validation{}), false, nil},
	{"error", reflect.TypeOf(gate.Error{}), false, nil},
}

// derived are Go fields that are not on the wire: values the decoder
// computes from another field. Presence flags (Has*) are checked separately:
// they make their field an option.
var derived = map[string]bool{"Request.NowSec": true, "Chunk.UpdatedSec": true}

// presence names the flag that makes a field optional where it is not HasX.
var presence = map[string]string{"Request.Now": "HasNow", "Chunk.UpdatedAt": "HasUpdated"}

// omittedWhenEmpty are output fields the encoder leaves out when empty, so
// the WIT declares them as options though Go has no presence flag.
var omittedWhenEmpty = map[string]bool{"GapEvent.QueryEmbedding": true, "Decision.Warnings": true}

// wireOrder is where the encoder's key order differs from the Go field order
// (gate.Error lives outside types.go, whose order is the wire order).
var wireOrder = map[string][]string{"error": {"code", "message", "field"}}

// typeOverride is where the WIT is stricter than Go's string.
var typeOverride = map[string]string{"Error.Code": "error-code", "RAGConfidence.ConsensusCount": "u32"}

// witNames maps Go struct types to WIT record or enum names.
var witNames = map[reflect.Type]string{}

func init() {
	for _, r := range goRecords {
		witNames[r.typ] = r.wit
	}
	witNames[reflect.TypeOf(gate.Action(""))] = "action"
	witNames[reflect.TypeOf(gate.Level(""))] = "level"
	witNames[reflect.TypeOf(gate.VectorMetric(""))] = "vector-metric"
	witNames[reflect.TypeOf(gate.RerankScale(""))] = "rerank-scale"
}

// jsonName is the wire name of a Go field: snake_case, with acronyms kept
// whole (DocID -> doc_id, BM25 -> bm25, SHA256 -> sha256).
func jsonName(goName string) string {
	r := []rune(goName)
	var b strings.Builder
	for i, c := range r {
		upper := c >= 'A' && c <= 'Z'
		if upper && i > 0 {
			prevLower := r[i-1] >= 'a' && r[i-1] <= 'z'
			nextLower := i+1 < len(r) && r[i+1] >= 'a' && r[i+1] <= 'z'
			prevDigit := r[i-1] >= '0' && r[i-1] <= '9'
			if prevLower || (nextLower && (prevDigit || r[i-1] >= 'A' && r[i-1] <= 'Z')) {
				b.WriteByte('_')
			}
		}
		b.WriteString(strings.ToLower(string(c)))
	}
	return b.String()
}

func kebab(s string) string { return strings.ReplaceAll(s, "_", "-") }

// witType renders a Go type as the WIT type it must be declared with.
func witType(t reflect.Type) string {
	if n, ok := witNames[t]; ok {
		return n
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Float64:
		return "f64"
	case reflect.Bool:
		return "bool"
	case reflect.Int:
		return "s64"
	case reflect.Slice:
		return "list<" + witType(t.Elem()) + ">"
	case reflect.Pointer:
		return "option<" + witType(t.Elem()) + ">"
	}
	return "?" + t.String()
}

// expectedFields is the WIT field list a Go type implies, in Go field order
// (which is the encoder's order).
func expectedFields(typ reflect.Type, input bool, required []string) []witField {
	var out []witField
	for i := range typ.NumField() {
		f := typ.Field(i)
		key := typ.Name() + "." + f.Name
		if strings.HasPrefix(f.Name, "Has") || derived[key] {
			continue
		}
		name := kebab(jsonName(f.Name))
		wt := witType(f.Type)
		if o, ok := typeOverride[key]; ok {
			wt = o
		}
		flag := presence[key]
		if flag == "" {
			flag = "Has" + f.Name
		}
		_, hasFlag := typ.FieldByName(flag)
		optional := hasFlag || omittedWhenEmpty[key]
		if input && !contains(required, name) && !strings.HasPrefix(wt, "option<") {
			optional = true
		}
		if optional {
			wt = "option<" + wt + ">"
		}
		out = append(out, witField{name, wt})
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func readWIT(t *testing.T) witFile {
	t.Helper()
	return parseWIT(t, WIT)
}

func TestJSONName(t *testing.T) {
	for in, want := range map[string]string{"DocID": "doc_id", "BM25": "bm25", "SHA256": "sha256", "RRF": "rrf",
		"FlagForReview": "flag_for_review", "BM25DenseAgreement": "bm25_dense_agreement", "RAGConfidence": "rag_confidence", "QueryEmbedding": "query_embedding", "ID": "id", "UpdatedAt": "updated_at"} {
		if got := jsonName(in); got != want {
			t.Errorf("jsonName(%s) = %s, want %s", in, got, want)
		}
	}
}

// Each WIT record has exactly the fields, order and types gate/types.go
// implies.
func TestRecordsMatchGoTypes(t *testing.T) {
	w := readWIT(t)
	for _, r := range goRecords {
		got, ok := w.records[r.wit]
		if !ok {
			t.Errorf("ctxgate.wit has no record %s (for gate.%s)", r.wit, r.typ.Name())
			continue
		}
		want := expectedFields(r.typ, r.input, r.required)
		if order, ok := wireOrder[r.wit]; ok {
			want = reorder(t, want, order)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("record %s does not match gate.%s\nwit: %v\ngo:  %v", r.wit, r.typ.Name(), got, want)
		}
	}
	// Records with no Go struct: description is written by Engine.Describe.
	for name := range w.records {
		if _, ok := witNameSet()[name]; !ok && name != "description" {
			t.Errorf("record %s in ctxgate.wit has no Go counterpart in this test", name)
		}
	}
}

func reorder(t *testing.T, fields []witField, order []string) []witField {
	var out []witField
	for _, name := range order {
		for _, f := range fields {
			if f.name == name {
				out = append(out, f)
			}
		}
	}
	if len(out) != len(fields) {
		t.Fatalf("wireOrder %v does not cover %v", order, fields)
	}
	return out
}

func witNameSet() map[string]bool {
	m := map[string]bool{}
	for _, r := range goRecords {
		m[r.wit] = true
	}
	return m
}

// The enums hold exactly the gate's constants.
func TestEnumsMatchConstants(t *testing.T) {
	w := readWIT(t)
	want := map[string][]string{
		"action":     {string(gate.ActionInject), string(gate.ActionCaveat), string(gate.ActionFallback), string(gate.ActionRefuse)},
		"level":      {string(gate.LevelSufficient), string(gate.LevelPartial), string(gate.LevelInsufficient)},
		"error-code": {gate.CodeBadJSON, gate.CodeBadField, gate.CodeLimit, gate.CodeBadPolicy, gate.CodeBadAnswer, gate.CodeInternal},
	}
	for _, m := range wire.VectorMetrics {
		want["vector-metric"] = append(want["vector-metric"], string(m))
	}
	for _, r := range wire.RerankScales {
		want["rerank-scale"] = append(want["rerank-scale"], string(r))
	}
	for name, cases := range want {
		var got []string
		for _, c := range w.enums[name] {
			got = append(got, strings.ReplaceAll(c, "-", "_"))
		}
		if !reflect.DeepEqual(got, cases) {
			t.Errorf("enum %s = %v, want %v", name, got, cases)
		}
	}
}

// The encoder's actual output has the keys the WIT declares, in order: the
// WIT describes the bytes, not just the Go structs.
func TestEncoderKeysMatchWIT(t *testing.T) {
	w := readWIT(t)
	n, err := host.NewNative(nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	req := `{"query":"how do I rotate the signing key","chunks":[{"id":"c1","doc_id":"ops","text":"To rotate the signing key, generate a new key pair.","scores":{"vector":0.8,"bm25":5}}]}`
	dec, err := n.Evaluate(ctx, []byte(req))
	if err != nil {
		t.Fatal(err)
	}
	checkKeys(t, w, "decision", dec)
	// The rag-confidence preset reports the optional rag_confidence object.
	ragPolicy, _ := policies.Get("rag-confidence")
	rn, err := host.NewNative(ragPolicy)
	if err != nil {
		t.Fatal(err)
	}
	ragDec, err := rn.Evaluate(ctx, []byte(`{"query":"q","chunks":[{"id":"c1","doc_id":"d","text":"t","scores":{"rerank":1.5}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	checkKeys(t, w, "decision", ragDec)
	var rd struct {
		RAGConfidence json.RawMessage `json:"rag_confidence"`
	}
	if json.Unmarshal(ragDec, &rd) != nil || len(rd.RAGConfidence) == 0 {
		t.Fatalf("the rag-confidence preset wrote no rag_confidence: %s", ragDec)
	}
	checkKeys(t, w, "rag-confidence", rd.RAGConfidence)
	var d struct {
		Chunks []json.RawMessage `json:"chunks"`
		Policy json.RawMessage   `json:"policy"`
	}
	json.Unmarshal(dec, &d)
	if len(d.Chunks) == 0 {
		t.Fatal("decision has no chunks to check")
	}
	checkKeys(t, w, "chunk-outcome", d.Chunks[0])
	checkKeys(t, w, "policy-ref", d.Policy)
	// Distances stated as cosines (the default): a decision with warnings.
	warned, err := n.Evaluate(ctx, []byte(`{"query":"q","chunks":[{"text":"a","scores":{"vector":0.2}},{"text":"b","scores":{"vector":0.3}},{"text":"c","scores":{"vector":0.4}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	checkKeys(t, w, "decision", warned)
	var wd struct {
		Warnings []json.RawMessage `json:"warnings"`
	}
	if json.Unmarshal(warned, &wd) != nil || len(wd.Warnings) != 1 {
		t.Fatalf("no warning: %s", warned)
	}
	checkKeys(t, w, "warning", wd.Warnings[0])
	desc, err := n.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkKeys(t, w, "description", desc)
	val, err := n.Validate(ctx, []byte(`{"answer":"Rotate it [S1].","tags":["S1"]}`))
	if err != nil {
		t.Fatal(err)
	}
	checkKeys(t, w, "validation", val)
	_, err = n.Evaluate(ctx, []byte(`{"query":3}`))
	ge, ok := err.(*host.GateError)
	if !ok {
		t.Fatalf("bad request: %v", err)
	}
	var env struct{ Error json.RawMessage }
	json.Unmarshal(ge.JSON, &env)
	checkKeys(t, w, "error", env.Error)
}

// checkKeys compares a JSON object's keys, in order, with a record's fields.
// Optional fields may be absent from the bytes.
func checkKeys(t *testing.T, w witFile, record string, obj []byte) {
	t.Helper()
	keys, err := objectKeys(obj)
	if err != nil {
		t.Fatalf("%s: %v: %s", record, err, obj)
	}
	fields := w.records[record]
	i := 0
	for _, k := range keys {
		for i < len(fields) && kebab(k) != fields[i].name {
			if !strings.HasPrefix(fields[i].typ, "option<") {
				t.Errorf("%s: field %s is not optional but the encoder did not write it before %q", record, fields[i].name, k)
			}
			i++
		}
		if i == len(fields) {
			t.Errorf("%s: the encoder writes key %q, which the WIT record does not declare (or declares earlier)\nkeys %v", record, k, keys)
			return
		}
		i++
	}
	for ; i < len(fields); i++ {
		if !strings.HasPrefix(fields[i].typ, "option<") {
			t.Errorf("%s: field %s is missing from the encoder's output", record, fields[i].name)
		}
	}
}

func objectKeys(b []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, err
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// The world's exports are the built modules' exports (when built).
func TestExportsMatchModules(t *testing.T) {
	w := readWIT(t)
	var names []string
	for n := range w.exports {
		names = append(names, n)
	}
	sort.Strings(names)
	if !reflect.DeepEqual(names, []string{"describe", "evaluate", "validate"}) {
		t.Fatalf("WIT exports %v, want describe, evaluate, validate", names)
	}
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	checked := 0
	for _, m := range host.Modules() {
		b, err := m.Module.Bytes()
		if err != nil {
			continue
		}
		cm, err := r.CompileModule(ctx, b)
		if err != nil {
			t.Fatalf("%s: %v", m.File, err)
		}
		for _, n := range names {
			if _, ok := cm.ExportedFunctions()[n]; !ok {
				t.Errorf("%s does not export %s, which the WIT declares", m.File, n)
			}
		}
		checked++
	}
	if checked == 0 {
		testenv.Missing(t, "no built module (run make build); the exports were checked against the WIT only")
	}
}

// The parser itself reads what the file holds (guarding the guards).
func TestParserSeesEveryRecord(t *testing.T) {
	w := readWIT(t)
	raw, err := os.ReadFile(filepath.Join(".", "ctxgate.wit"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(regexp.MustCompile(`(?m)^\s*record\s`).FindAll(raw, -1)); n != len(w.records) {
		t.Fatalf("file has %d records, parser found %d", n, len(w.records))
	}
	if len(w.records["decision"]) != 19 {
		t.Fatalf("decision has %d fields, want 19", len(w.records["decision"]))
	}
}
