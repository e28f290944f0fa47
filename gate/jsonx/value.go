package jsonx

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

// Value is one parsed JSON value. It is read through its methods; the zero
// Value is null. A nil *Value answers like null too, so lookups chain safely.
//
// Objects store their members as alternating key/value entries in items (a
// key entry is a String value), which keeps every container to one slice and
// a Value to 56 bytes.
type Value struct {
	kind  Kind
	b     bool
	num   float64
	str   string  // string content, or the raw number text
	items []Value // array elements, or object key/value pairs
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
// finite: the parser rejects numbers that overflow float64.
func (v *Value) Float() float64 {
	if v == nil {
		return 0
	}
	return v.num
}

// Raw returns the number exactly as written in the document, so a host can
// re-serialize it untouched ("" unless Kind is Number).
func (v *Value) Raw() string {
	if v == nil || v.kind != Number {
		return ""
	}
	return v.str
}

// Str returns the unescaped string ("" unless Kind is String).
func (v *Value) Str() string {
	if v == nil || v.kind != String {
		return ""
	}
	return v.str
}

// Len is the number of array elements or object members (0 otherwise).
func (v *Value) Len() int {
	if v == nil {
		return 0
	}
	switch v.kind {
	case Array:
		return len(v.items)
	case Object:
		return len(v.items) / 2
	}
	return 0
}

// Index returns array element i, or nil when v is not an array or i is out
// of range.
func (v *Value) Index(i int) *Value {
	if v == nil || v.kind != Array || i < 0 || i >= len(v.items) {
		return nil
	}
	return &v.items[i]
}

// Key returns the key of object member i, in document order ("" when out of
// range).
func (v *Value) Key(i int) string {
	if v == nil || v.kind != Object || i < 0 || 2*i+1 >= len(v.items) {
		return ""
	}
	return v.items[2*i].str
}

// Member returns the value of object member i, in document order.
func (v *Value) Member(i int) *Value {
	if v == nil || v.kind != Object || i < 0 || 2*i+1 >= len(v.items) {
		return nil
	}
	return &v.items[2*i+1]
}

// Get returns the member named key, or nil. Keys are unique (the parser
// rejects duplicates), so the first match is the only one. A linear scan is
// the fastest lookup for the small objects JSON APIs use.
func (v *Value) Get(key string) *Value {
	if v == nil || v.kind != Object {
		return nil
	}
	for i := 0; i+1 < len(v.items); i += 2 {
		if v.items[i].str == key {
			return &v.items[i+1]
		}
	}
	return nil
}
