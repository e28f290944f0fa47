package jsonx

import "unsafe"

// Kind is the JSON type of a Value.
type Kind uint8

const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

// String names the kind the way error messages do ("a number", "an object").
func (k Kind) String() string {
	switch k {
	case Null:
		return "null"
	case Bool:
		return "true or false"
	case Number:
		return "a number"
	case String:
		return "a string"
	case Array:
		return "an array"
	case Object:
		return "an object"
	}
	return "unknown"
}

// document is one parsed document: the (unescaped in place) source bytes and
// the arena of every container's children. Values refer into both by int32
// offsets, never by pointer, so the tree holds no interior pointers (see
// doc.go, "Why offsets and not strings?").
type document struct {
	src   []byte
	nodes []Value
	root  Value
}

// Value is one parsed JSON value. It is read through its methods; the zero
// Value is null. A nil *Value answers like null too, so lookups chain safely.
//
// Its only pointer is to its document's small header object. A string or a
// number is (off, n) into the document's source; an array or object is (off,
// n) into the document's node arena, where its children sit next to each
// other (an object's as alternating key, value). A Value is 16 bytes on
// wasm32, 24 on 64-bit: the 1 Mi values a 4 MiB request may hold must fit
// next to the request in the TinyGo module's heap, which grows only by
// doubling its linear memory and so stops at 48 MiB under the host's 64 MiB
// cap (with 24-byte values it ran out of memory). That is why a number
// keeps no float64 (Float converts its text).
type Value struct {
	d    *document
	off  int32 // String, Number: byte offset in d.src; Array, Object: first child in d.nodes
	n    int32 // String, Number: byte length; Array, Object: child count (2 per member)
	kind Kind
	b    bool
}

// Kind returns the JSON type; a nil Value is Null.
func (v *Value) Kind() Kind {
	if v == nil {
		return Null
	}
	return v.kind
}

// IsNull reports whether v is absent or JSON null.
func (v *Value) IsNull() bool { return v == nil || v.kind == Null }

// Bool returns the boolean value (false unless Kind is Bool).
func (v *Value) Bool() bool { return v != nil && v.b }

// Float returns the number as float64 (0 unless Kind is Number). It is always
// finite: the parser rejects numbers that overflow float64. It converts the
// number's text on every call (strconv.ParseFloat, no allocation): callers
// that need a number twice keep the float64.
func (v *Value) Float() float64 {
	if v == nil || v.kind != Number {
		return 0
	}
	return parseFloat(v.text())
}

// Raw returns the number exactly as written in the document, so a host can
// re-serialize it untouched ("" unless Kind is Number). Like Str, it is a
// view of the document's bytes.
func (v *Value) Raw() string {
	if v == nil || v.kind != Number {
		return ""
	}
	return v.text()
}

// Str returns the unescaped string ("" unless Kind is String). It does not
// copy: the result is a view of the document's buffer and keeps all of it
// alive. A caller that keeps a string past the document, or keeps many,
// should copy it (strings.Clone): see doc.go on TinyGo's collector.
func (v *Value) Str() string {
	if v == nil || v.kind != String {
		return ""
	}
	return v.text()
}

// text is the (off, n) bytes of the source as a string, or "" when they are
// out of range (a Value from a Parser that has parsed again since).
func (v *Value) text() string {
	if v.d == nil || v.n <= 0 || v.off < 0 || int(v.off)+int(v.n) > len(v.d.src) {
		return ""
	}
	return unsafe.String(&v.d.src[v.off], int(v.n))
}

// children returns the container's child nodes (nil when out of range).
func (v *Value) children() []Value {
	if v.d == nil || v.n <= 0 || v.off < 0 || int(v.off)+int(v.n) > len(v.d.nodes) {
		return nil
	}
	return v.d.nodes[v.off : v.off+v.n]
}

// Len is the number of array elements or object members (0 otherwise).
func (v *Value) Len() int {
	if v == nil {
		return 0
	}
	switch v.kind {
	case Array:
		return len(v.children())
	case Object:
		return len(v.children()) / 2
	}
	return 0
}

// Index returns array element i, or nil when v is not an array or i is out
// of range.
func (v *Value) Index(i int) *Value {
	if v == nil || v.kind != Array {
		return nil
	}
	c := v.children()
	if i < 0 || i >= len(c) {
		return nil
	}
	return &c[i]
}

// Key returns the key of object member i, in document order ("" when out of
// range).
func (v *Value) Key(i int) string {
	if v == nil || v.kind != Object {
		return ""
	}
	c := v.children()
	if i < 0 || 2*i+1 >= len(c) {
		return ""
	}
	return c[2*i].text()
}

// Member returns the value of object member i, in document order.
func (v *Value) Member(i int) *Value {
	if v == nil || v.kind != Object {
		return nil
	}
	c := v.children()
	if i < 0 || 2*i+1 >= len(c) {
		return nil
	}
	return &c[2*i+1]
}

// Get returns the member named key, or nil. Keys are unique (the parser
// rejects duplicates), so the first match is the only one. A linear scan is
// the fastest lookup for the small objects JSON APIs use.
func (v *Value) Get(key string) *Value {
	if v == nil || v.kind != Object {
		return nil
	}
	c := v.children()
	for i := 0; i+1 < len(c); i += 2 {
		if int(c[i].n) == len(key) && c[i].text() == key {
			return &c[i+1]
		}
	}
	return nil
}
