package wire

import "unicode"

// BlankQuery reports whether a query has nothing to search for: it is
// empty, or all white space, zero-width and other format characters, and
// control characters (a query of NULs or of U+200B is as empty as one of
// spaces, and must get the same error). A query that starts with a letter
// is decided at its first byte.
func BlankQuery(q string) bool {
	for _, r := range q {
		if !unicode.IsSpace(r) && !unicode.IsControl(r) && !unicode.Is(unicode.Cf, r) {
			return false
		}
	}
	return true
}
