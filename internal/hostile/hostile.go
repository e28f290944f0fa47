// Package hostile builds inputs made to be slow, large or memory-hungry
// within the gate's default limits (gate/wire/limits.go: 1 MiB request, 1000
// chunks per list, 16 lists, 64 KiB per chunk, 768 KiB of chunk text, 4
// KiB query, 4096 dimensions, depth 32, one JSON value per 8 request bytes
// and 1024, 2 MiB of output).
// The worst-case search (host/adversarial_test.go, the Envoy filter's in
// guest/envoy/abitest) runs each through every host, on one instance, over
// and over.
//
// Everything is generated deterministically from the size budget, so the
// hostile inputs live in the repository as this code, not as megabytes of
// files. Each case names the class of attack it belongs to; a class is what
// docs/security.md's guarantees are stated for.
//
// Files (files_unix.go) makes the other kind of hostile input: special
// files where a policy, trust or key file is expected.
package hostile

import (
	"math/bits"
	"os"
	"strconv"
	"strings"
)

// Case is one hostile input.
type Case struct {
	Name  string
	Class string // keys, collisions, nesting, escapes, output, size, query, numbers, answer
	Op    string // "evaluate" (a gate request) or "validate" (an answer check input)
	Body  []byte
}

// Cases returns every case whose body fits budget bytes (the request limit:
// 1 MiB for the gate's default policy), with chunk text up to three
// quarters of it (max_total_bytes, 768 KiB by default). Cases scale with
// the budget, so a host with a smaller body limit gets the same attacks at
// its size; a budget under 64 KiB leaves some out.
func Cases(budget int) []Case {
	var out []Case
	add := func(name, class, op string, body []byte) {
		if len(body) <= budget {
			out = append(out, Case{Name: name, Class: class, Op: op, Body: body})
		}
	}
	ev := func(name, class string, body []byte) { add(name, class, "evaluate", body) }
	room := budget - 256 // for the request around a payload
	// Chunk lists: max_chunks, or fewer for a small budget (a chunk takes
	// at least a KiB of it).
	nc := max(min(1000, room/1024), 1)
	text := budget * 3 / 4         // max_total_bytes
	values := budget/8 + 1024 - 64 // the value budget, less the request around the payload
	chunks := func(n, room int, fn func(i, room int) string, extra string) []byte {
		return chunkList(n, room, text, fn, extra)
	}

	// Object keys: the duplicate-key check.
	ev("metadata: one object of as many keys as fit", "keys", metadataObject(room, func(i int) string { return "k" + strconv.Itoa(i) }))
	ev("metadata: one object of keys up to the value budget", "keys", metadataObject(min(room, values*5), func(i int) string { return "k" + strconv.Itoa(i) }))
	ev("metadata: 2 KiB keys sharing all but 8 bytes", "keys",
		metadataObject(room, func(i int) string { return strings.Repeat("p", 2040) + pad8(i) }))
	ev("metadata: 64-key objects (the direct decoder's most)", "keys", keyObjects(room, 64, 120, false))
	ev("metadata: 65-key objects (the tree decoder)", "keys", keyObjects(room, 65, 120, false))
	ev("metadata: 9-key objects, then a bad field (both decoders)", "keys", keyObjects(room, 9, 120, true))
	ev("metadata: 64-key objects, then a bad field (both decoders)", "keys", keyObjects(room, 64, 120, true))

	// Hashes made to collide: the key hash and the chunk-id tables.
	ev("metadata: every key of one object hashing alike", "collisions", collidingObject(room, 0))
	ev("metadata: keys hashing alike after a 1 KiB prefix", "collisions", collidingObject(room, 1024))
	ev("chunk ids of 3 KiB in one slot of a 2048-slot FNV table", "collisions", collidingIDs(room, nc, fnvSlot))
	ev("chunk ids of 3 KiB in one slot of a 2048-slot HashKey table", "collisions", collidingIDs(room, nc, hashKeySlot))

	// Nesting.
	// Metadata's array is level 4 of the request: 28 more reach max_depth.
	nested := strings.Repeat("[", 28) + "0" + strings.Repeat("]", 28)
	ev("depth-32 arrays in metadata", "nesting", metadataArray(room, nested))
	nestedObj := strings.Repeat(`{"a":`, 28) + "0" + strings.Repeat("}", 28)
	ev("depth-32 objects in metadata", "nesting", metadataArray(room, nestedObj))
	ev("only '['", "nesting", []byte(strings.Repeat("[", budget)))
	ev("'[' in metadata, never closed", "nesting", []byte(`{"query":"q","chunks":[{"metadata":`+strings.Repeat("[", room)))
	ev("'{\"a\":' in metadata, never closed", "nesting", []byte(`{"query":"q","chunks":[{"metadata":`+strings.Repeat(`{"a":`, room/5)))

	// Escapes: strings that decode small and encode large, or the reverse.
	ev(`chunk texts of \u003c escapes`, "escapes", chunks(nc, room, func(i, n int) string { return repeatTo(`\u003c`, n) }, ""))
	ev(`chunk texts of \ud83d\ude00 surrogate pairs`, "escapes", chunks(nc, room, func(i, n int) string { return repeatTo(`\ud83d\ude00`, n) }, ""))
	ev(`chunk texts of \" and \\`, "escapes", chunks(nc, room, func(i, n int) string { return repeatTo(`\"\\`, n) }, ""))
	ev(`chunk texts of \u0001 control characters`, "escapes", chunks(nc, room, func(i, n int) string { return repeatTo(`\u0001`, n) }, ""))
	ev("metadata strings of escapes", "escapes", metadataArray(room, `"`+strings.Repeat(`\u00e9\n\"`, 200)+`"`))

	// Output: content that the decision writes escaped, several times over.
	ev("chunk texts of 64 KiB of '<' up to max_total_bytes", "output", chunks(max(text/(64<<10), 1), room, func(i, n int) string { return strings.Repeat("<", n) }, ""))
	ev("chunk ids of '<'", "output", idChunks(room, nc, func(i, n int) string { return strings.Repeat("<", max(n-8, 0)) + pad8(i) }))
	ev("chunk texts of fence and source tags", "output",
		chunks(nc, room, func(i, n int) string { return repeatTo("</sources><untrusted>[S1][S2, S3]", min(n, 2040)) }, ""))
	ev("titles and doc ids of '<' and line breaks", "output", chunks(nc, room, func(i, n int) string { return "t" },
		`,"title":"`+strings.Repeat(`<\n`, 400)+`","doc_id":"`+strings.Repeat(`&\r`, 400)+`"`))

	// Size: the largest valid requests.
	prose := func(i, n int) string {
		w := words(min(n, 2040)/2+1, i)
		return w[:min(n, 2040, len(w))]
	}
	ev("1000 chunks of 2 KiB prose, 4 KiB query", "size", withQuery(words(700, 1)[:4000], chunks(nc, room-4000, prose, "")))
	ev("16 lists of chunks up to the value budget (merge)", "size", resultLists(room, min(1000, values/16/14)))
	ev("1000 chunks of 2 KiB CJK", "size", withQuery("知识检索的置信度", chunks(nc, room, func(i, n int) string {
		return repeatTo("知识检索增强生成系统的置信度门控", min(n, 2040))
	}, "")))
	ev("100 chunks of 4096-dim embeddings", "size", embeddings(room))
	ev("1000 chunks with every field", "size", chunks(nc, room, prose,
		`,"title":"A title","doc_id":"doc","updated_at":"2024-05-01T10:00:00Z","trust":0.9,"untrusted":false,"temperature":0.5,"metadata":{"a":1,"b":[1,2],"c":{"d":"e"}}`))

	// Query terms: a 4 KiB query of distinct short terms against chunks full of them.
	terms := queryTerms(4000)
	ev("4 KiB query of 1,300 terms, chunks of those terms", "query", withQuery(terms, chunks(nc, room-4000, func(i, n int) string {
		return (terms[(i*37)%3000:] + " " + terms)[:min(n, 2040)]
	}, "")))
	ev("4 KiB query of one repeated term", "query", withQuery(repeatTo("a ", 4000), chunks(nc, room-4000, func(i, n int) string {
		return repeatTo("a ", min(n, 2040))
	}, "")))

	// Numbers and the value budget.
	ev("numbers in metadata up to the value budget", "numbers",
		[]byte(`{"query":"q","chunks":[{"text":"q","metadata":[`+strings.Repeat("0,", min(room/2, values))+`0]}]}`))
	ev("zeros over the value budget", "numbers", []byte(`{"query":"q","query_embedding":[`+strings.Repeat("0,", room/2)+`0]}`))
	ev("numbers with exponents in metadata", "numbers", metadataArray(room, "1.5e300"))
	ev("one number of a million digits", "numbers",
		[]byte(`{"query":"q","chunks":[{"text":"q","metadata":1`+strings.Repeat("7", room)+`e-999999}]}`))
	ev("empty strings in metadata up to the value budget", "numbers",
		[]byte(`{"query":"q","chunks":[{"text":"q","metadata":[`+strings.Repeat(`"",`, min(room/3, values))+`""]}]}`))

	// Answers.
	va := func(name string, body []byte) { add(name, "answer", "validate", body) }
	va("answer of distinct unknown tags", answerBody(room, func(i int) string { return "[S" + strconv.Itoa(i+2) + "]" }, `["S1"]`))
	va("answer of cited and uncited sentences", answerBody(room, func(i int) string {
		if i%2 == 0 {
			return "The key rotates every day [S1]. "
		}
		return "Nothing else is said here. "
	}, `["S1","S2"]`))
	va("answer of uncited sentences of '<'", answerBody(room, func(int) string { return "a<<<<<<<<<. " }, `["S1"]`))
	va(`answer of \u0001 sentences`, answerBody(room, func(int) string { return `a\u0001\u0001. ` }, `["S1"]`))
	va("answer of terminator runs", answerBody(room, func(i int) string { return "!?.!?..." }, `["S1"]`))
	va("answer citing 1000 offered tags", answerBody(room, func(i int) string {
		return "Fact [S" + strconv.Itoa(i%1000+1) + ", S" + strconv.Itoa((i*7)%1000+1) + "]. "
	}, offered(1000)))
	va("answer of one long citation", answerBody(room, func(i int) string {
		if i == 0 {
			return "Claim ["
		}
		return "S" + strconv.Itoa(i%999999+1) + ","
	}, `["S1"]`))
	return out
}

// ChatBody wraps a gate request in a chat-completions body for the Envoy
// filter, through its ctxgate extension member.
func ChatBody(gateRequest []byte) []byte {
	b := []byte(`{"model":"m","messages":[{"role":"user","content":"q"}],"ctxgate":`)
	b = append(b, gateRequest...)
	return append(b, '}')
}

func withQuery(q string, body []byte) []byte {
	return append([]byte(`{"query":"`+q+`"`), body[len(`{"query":"q"`):]...)
}

// chunkList is a request of n chunks whose texts, text(i, room), share
// room bytes of request and maxText of text (each text gets an equal part,
// at most 64 KiB), and whose members end with extra.
func chunkList(n, room, maxText int, text func(i, room int) string, extra string) []byte {
	var b strings.Builder
	b.WriteString(`{"query":"q","chunks":[`)
	per := min(room/n-80-len(extra), maxText/n-8, 64<<10-8)
	if per < 1 {
		per = 1
	}
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"id":"c` + strconv.Itoa(i) + `","text":"` + text(i, per) +
			`","scores":{"vector":0.` + strconv.Itoa(10+i%89) + `,"bm25":` + strconv.Itoa(i%30) + `.5}` + extra + `}`)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// idChunks is nc chunks whose ids are id(i, n), n the room each has.
func idChunks(room, nc int, id func(i, n int) string) []byte {
	var b strings.Builder
	b.WriteString(`{"query":"q","chunks":[`)
	per := max(room/nc-48, 8)
	for i := 0; i < nc; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"id":"` + id(i, per) + `","text":"x","scores":{"vector":0.5}}`)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// metadataObject is one chunk whose metadata is one object of the keys
// key(0), key(1)... that fit in room.
func metadataObject(room int, key func(i int) string) []byte {
	var b strings.Builder
	b.WriteString(`{"query":"q","chunks":[{"text":"q","metadata":{`)
	for i := 0; ; i++ {
		k := `"` + key(i) + `":0`
		if b.Len()+len(k)+8 > room {
			break
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
	}
	b.WriteString(`}}]}`)
	return []byte(b.String())
}

// metadataArray is one chunk whose metadata is an array of item, repeated
// to fill room.
func metadataArray(room int, item string) []byte {
	n := max((room-64)/(len(item)+1), 1)
	return []byte(`{"query":"q","chunks":[{"text":"q","metadata":[` + strings.Repeat(item+",", n-1) + item + `]}]}`)
}

// keyObjects is metadata of objects of k keys each, keyLen bytes long and
// alike but for their last bytes; with bad, the request ends in an
// unknown field, so the direct decoder reads it all and gives up and the
// tree decoder reads it all again.
func keyObjects(room, k, keyLen int, bad bool) []byte {
	var obj strings.Builder
	obj.WriteByte('{')
	for i := 0; i < k; i++ {
		if i > 0 {
			obj.WriteByte(',')
		}
		obj.WriteString(`"` + strings.Repeat("k", keyLen-8) + pad8(i) + `":0`)
	}
	obj.WriteByte('}')
	body := metadataArray(room-16, obj.String())
	if bad {
		body = append(body[:len(body)-1], `,"zzz":1}`...)
	}
	return body
}

// collidingObject is one metadata object whose keys, after prefix bytes of
// 'p', all have the same gate/jsonx.HashKey (collide, below): the worst
// case of the duplicate-key check, whose long runs of equal hashes it
// sorts by bytes.
func collidingObject(room, prefix int) []byte {
	keys := collide(strings.Repeat("p", prefix), (room-64)/(prefix+32+5))
	return metadataObject(room, func(i int) string {
		if i >= len(keys) {
			return "x" + strconv.Itoa(i) // past the collisions: never reached in room
		}
		return keys[i]
	})
}

// collide returns n distinct keys, prefix and 32 printable bytes, whose
// HashKey values are all equal. HashKey's step (h' = (rotl(h, 23) ^ w) * k)
// is invertible, so a second word can cancel any first one: for each first
// word, the second that lands on a chosen state is computed, and kept when
// its bytes are printable. Two such 16-byte blocks of m variants each give
// m*m keys (collisions chain: each variant of the first block leaves the
// same state for the second).
func collide(prefix string, n int) []string {
	const k = 0x9E3779B97F4A7C15
	if len(prefix)%8 != 0 {
		panic("hostile: collide wants a prefix of whole words")
	}
	h := uint64(len(prefix)+32) * k
	for i := 0; i+8 <= len(prefix); i += 8 {
		h = (bits.RotateLeft64(h, 23) ^ le64(prefix[i:])) * k
	}
	m := 1
	for m*m < n {
		m++
	}
	// block returns m two-word blocks that all take state h0 to one state.
	seed := uint64(0)
	block := func(h0 uint64) ([]string, uint64) {
		var out []string
		var target, end uint64
		for ; len(out) < m; seed++ {
			w0 := printable(seed)
			h1 := (bits.RotateLeft64(h0, 23) ^ w0) * k
			if len(out) == 0 {
				w1 := printable(seed ^ 0x5555)
				target = bits.RotateLeft64(h1, 23) ^ w1
				end = target * k
				out = append(out, word(w0)+word(w1))
				continue
			}
			if w1 := target ^ bits.RotateLeft64(h1, 23); isPrintable(w1) {
				out = append(out, word(w0)+word(w1))
			}
		}
		return out, end
	}
	first, mid := block(h)
	second, _ := block(mid)
	out := make([]string, 0, n)
	for _, a := range first {
		for _, b := range second {
			if len(out) < n {
				out = append(out, prefix+a+b)
			}
		}
	}
	return out
}

// printable spreads seed over eight bytes in 'A'..'z' except '\\'.
func printable(seed uint64) uint64 {
	var w uint64
	x := seed*0x9E3779B97F4A7C15 + 1
	for j := 0; j < 8; j++ {
		c := 'A' + x%57
		if c == '\\' {
			c = 'a'
		}
		w |= c << (8 * j)
		x /= 57
		if x == 0 {
			x = seed + uint64(j)*7 + 3
		}
	}
	return w
}

func isPrintable(w uint64) bool {
	for j := 0; j < 8; j++ {
		if c := byte(w >> (8 * j)); c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

func le64(s string) uint64 {
	var w uint64
	for j := 7; j >= 0; j-- {
		w = w<<8 | uint64(s[j])
	}
	return w
}

func word(w uint64) string {
	var b [8]byte
	for j := range b {
		b[j] = byte(w >> (8 * j))
	}
	return string(b[:])
}

// collidingIDs is 1000 chunks whose ids, a few KiB alike but for their
// last eight bytes, all fall in one slot of a 2048-slot table under slot:
// the worst case of a duplicate-id table that compares ids along a probe
// sequence. slot(prefix) returns the slot of prefix + an eight-byte word.
func collidingIDs(room, nc int, slot func(prefix string) func(last uint64) uint64) []byte {
	per := max(room/nc*3/4-48, 16) // the decision writes each id twice: keep it under max_decision_bytes
	prefix := strings.Repeat("i", (per-8)&^7)
	of := slot(prefix)
	var ids []string
	want := uint64(0)
	for s := uint64(0); len(ids) < nc; s++ {
		w := printable(s)
		if sl := of(w); len(ids) == 0 {
			want = sl
			ids = append(ids, prefix+word(w))
		} else if sl == want {
			ids = append(ids, prefix+word(w))
		}
	}
	return idChunks(room, nc, func(i, _ int) string { return ids[i] })
}

// fnvSlot is the 2048-slot index of FNV-1a (the direct decoder's
// duplicate-id table hashed ids so).
func fnvSlot(prefix string) func(uint64) uint64 {
	h0 := uint64(14695981039346656037)
	for j := 0; j < len(prefix); j++ {
		h0 = (h0 ^ uint64(prefix[j])) * 1099511628211
	}
	return func(w uint64) uint64 {
		h := h0
		for j := 0; j < 8; j++ {
			h = (h ^ (w >> (8 * j) & 0xff)) * 1099511628211
		}
		return h & 2047
	}
}

// hashKeySlot is the 2048-slot index of gate/jsonx.HashKey (its steps
// copied here, so the generator does not import the gate) for a prefix of
// whole words.
func hashKeySlot(prefix string) func(uint64) uint64 {
	const k = 0x9E3779B97F4A7C15
	h0 := uint64(len(prefix)+8) * k
	for i := 0; i+8 <= len(prefix); i += 8 {
		h0 = (bits.RotateLeft64(h0, 23) ^ le64(prefix[i:])) * k
	}
	return func(w uint64) uint64 {
		h := (bits.RotateLeft64(h0, 23) ^ w) * k
		h ^= h >> 32
		h *= 0xD6E8FEB86659FD93
		return (h ^ h>>32) & 2047
	}
}

func resultLists(room, n int) []byte {
	lists := make([]string, 16)
	per := room/16 - 64
	for q := range lists {
		body := chunkList(n, per, per, func(i, n int) string { return "w" + strconv.Itoa(i+q) }, "")
		lists[q] = string(body[len(`{"query":"q","chunks":`) : len(body)-1])
	}
	return []byte(`{"query":"w1 w2 w3","results_per_query":[` + strings.Join(lists, ",") + `]}`)
}

func embeddings(room int) []byte {
	emb := func(dims, seed int) string {
		b := make([]byte, 0, dims*10)
		b = append(b, '[')
		for i := range dims {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendFloat(b, float64((i*7+seed)%97)/97-0.5, 'f', 6, 64)
		}
		return string(append(b, ']'))
	}
	one := emb(4096, 1)
	n := min(100, room/(len(one)+64)-1)
	var b strings.Builder
	b.WriteString(`{"query":"w1","query_embedding":` + emb(4096, 0) + `,"chunks":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"id":"c` + strconv.Itoa(i) + `","text":"w1 w2","scores":{"vector":0.5},"embedding":` + one + `}`)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// answerBody is an answer of part(0), part(1)... filling room, with the
// offered tags (a JSON array).
func answerBody(room int, part func(i int) string, tags string) []byte {
	var b strings.Builder
	b.WriteString(`{"query":"q","tags":` + tags + `,"answer":"`)
	for i := 0; ; i++ {
		p := part(i)
		if b.Len()+len(p)+4 > room {
			break
		}
		b.WriteString(p)
	}
	b.WriteString(`"}`)
	return []byte(b.String())
}

func offered(n int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteByte(',')
		}
		b.WriteString(`"S` + strconv.Itoa(i) + `"`)
	}
	b.WriteByte(']')
	return b.String()
}

// words is n space-separated words from a 50,000-word vocabulary.
func words(n, seed int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("w")
		b.WriteString(strconv.Itoa((i*7919 + seed) % 50000))
	}
	return b.String()
}

// queryTerms is about n bytes of distinct short terms.
func queryTerms(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n-4; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatInt(int64(i), 36))
	}
	return b.String()
}

// repeatTo repeats unit to at most n bytes, in whole units.
func repeatTo(unit string, n int) string {
	return strings.Repeat(unit, max(n/len(unit), 1))
}

// pad8 is i in eight digits.
func pad8(i int) string {
	s := strconv.Itoa(i)
	return strings.Repeat("0", max(8-len(s), 0)) + s
}

// Representatives marks, for a long test that cannot run every case many
// times, the largest valid inputs (class "size", every one) and the
// largest input of every other class.
func Representatives(cases []Case) []bool {
	keep := make([]bool, len(cases))
	largest := map[string]int{}
	for i, c := range cases {
		if c.Class == "size" {
			keep[i] = true
			continue
		}
		if j, ok := largest[c.Class]; !ok || len(c.Body) > len(cases[j].Body) {
			largest[c.Class] = i
		}
	}
	for _, i := range largest {
		keep[i] = true
	}
	return keep
}

// Rounds is how many times a repeated-call test gives each input to one
// instance: CTXGATE_REPEAT when set (0 if it is not a number), else def,
// or 3 in a short run.
func Rounds(def int, short bool) int {
	if s := os.Getenv("CTXGATE_REPEAT"); s != "" {
		n, _ := strconv.Atoi(s)
		return n
	}
	if short {
		return 3
	}
	return def
}
