package decode

// The field table (fields_gen.go: field codes, packed names, lengths and the
// member lists) is generated from the json tags of the wire types, the one
// declaration of the request's members.
//
//go:generate go run ./gen
