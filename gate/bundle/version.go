package bundle

import "github.com/ctxgate/ctxgate/gate/jsonx"

// CompareVersions orders policy versions: dot-separated parts, compared as
// numbers when both parts are all digits ("1.10" > "1.9"), byte-wise
// otherwise; a version that is a prefix of another sorts first ("1" < "1.0").
// It returns -1, 0 or +1.
func CompareVersions(a, b string) int {
	for {
		pa, ra, moreA := cut(a)
		pb, rb, moreB := cut(b)
		if c := comparePart(pa, pb); c != 0 {
			return c
		}
		switch {
		case !moreA && !moreB:
			return 0
		case !moreA:
			return -1
		case !moreB:
			return 1
		}
		a, b = ra, rb
	}
}

func cut(s string) (part, rest string, more bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

func comparePart(a, b string) int {
	if digits(a) && digits(b) {
		a, b = trimZeros(a), trimZeros(b)
		if len(a) != len(b) {
			if len(a) < len(b) {
				return -1
			}
			return 1
		}
	}
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func trimZeros(s string) string {
	for len(s) > 1 && s[0] == '0' {
		s = s[1:]
	}
	return s
}

func checkVersion(canonicalPolicy []byte, min string) error {
	v, err := parse(canonicalPolicy)
	if err != nil {
		return bad("policy", "policy is not valid JSON: "+err.Error())
	}
	ver := v.Get("version")
	if ver.Kind() != jsonx.String || ver.Str() == "" {
		return bad("policy.version", "missing: a minimum policy version "+min+" is configured")
	}
	if CompareVersions(ver.Str(), min) < 0 {
		return bad("policy.version", "policy version "+ver.Str()+" is older than the minimum "+min+" (replay of an older policy?)")
	}
	return nil
}
