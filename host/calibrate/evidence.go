package calibrate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/ctxgate/ctxgate/gate"
)

// evidence is the examples as independent pieces of evidence. Lines are
// not evidence: the same request labeled the same way twice says nothing
// new, and a question asked twice is one draw from the source, not two.
// So exact duplicates (the same request, the same label) are dropped, and
// examples sharing a group or a request form one independent group:
// groups joined by a request they share are one group. The binomial test
// counts these groups (learnThenTest), the splits keep them whole, and the
// cross-validation folds by them.
//
// A group's key is the least fingerprint of its requests: it depends on
// what the examples hold, never on group names or line positions, so ten
// copies of a set, however they are grouped or ordered, split and test
// exactly as one copy does.
type evidence struct {
	exs        []Example // distinct examples, first occurrences in input order
	keys       []string  // each kept example's group key
	duplicates int       // exact duplicates dropped
	groups     int       // independent groups
}

func independent(exs []Example) (*evidence, error) {
	fps := make([]string, len(exs))
	for i := range exs {
		ex := &exs[i]
		if ex.Request == nil {
			return nil, fmt.Errorf("%s: request is missing", ex.where(i))
		}
		if field, msg := CheckRequest(ex.Request); msg != "" {
			return nil, fmt.Errorf("%s: request.%s: %s", ex.where(i), field, msg)
		}
		fps[i] = fingerprint(ex.Request)
	}
	// Union-find over example indices: each example joins the first
	// example with its request and the first with its group.
	parent := make([]int, len(exs))
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	union := func(a, b int) {
		if ra, rb := find(a), find(b); ra != rb {
			parent[max(ra, rb)] = min(ra, rb)
		}
	}
	byRequest, byGroup := map[string]int{}, map[string]int{}
	ev := &evidence{}
	seen := map[string]bool{}
	var kept []int
	for i := range exs {
		parent[i] = i
		if first, ok := byRequest[fps[i]]; ok {
			union(i, first)
		} else {
			byRequest[fps[i]] = i
		}
		if g := exs[i].Group; g != "" {
			if first, ok := byGroup[g]; ok {
				union(i, first)
			} else {
				byGroup[g] = i
			}
		}
		k := fps[i] + strconv.Itoa(b2i(exs[i].Label))
		if seen[k] {
			ev.duplicates++
			continue
		}
		seen[k] = true
		ex := exs[i]
		ex.pos = i + 1
		ev.exs = append(ev.exs, ex)
		kept = append(kept, i)
	}
	least := map[int]string{} // root -> least fingerprint
	for i := range exs {
		r := find(i)
		if k, ok := least[r]; !ok || fps[i] < k {
			least[r] = fps[i]
		}
	}
	ev.keys = make([]string, len(kept))
	for j, i := range kept {
		ev.keys[j] = least[find(i)]
	}
	ev.groups = len(least)
	return ev, nil
}

// fingerprint identifies a request by everything the gate reads of it
// (every field, presence flags included).
func fingerprint(req *gate.Request) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%#v", *req))
	return hex.EncodeToString(sum[:])
}
