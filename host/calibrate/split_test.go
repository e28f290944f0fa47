package calibrate

import (
	"math"
	"strconv"
	"testing"
)

// Splits keep groups whole, follow the shares per label stratum, and
// depend only on the seed and the group keys.
func TestAssignSplits(t *testing.T) {
	var exs []Example
	var keys []string
	for q := 0; q < 200; q++ {
		g := "q" + strconv.Itoa(q)
		exs = append(exs, Example{Label: true, Group: g}, Example{Label: false, Group: g})
		keys = append(keys, g, g)
	}
	for q := 0; q < 100; q++ {
		exs = append(exs, Example{Label: q%2 == 0}) // groups of one
		keys = append(keys, "e"+strconv.Itoa(q))
	}
	a := assignSplits(exs, keys, 1, 0.6, 0.1)
	if b := assignSplits(exs, keys, 1, 0.6, 0.1); !equal(a, b) {
		t.Fatal("the same seed split differently")
	}
	if c := assignSplits(exs, keys, 2, 0.6, 0.1); equal(a, c) {
		t.Fatal("another seed split the same way")
	}
	count := map[split]int{}
	for i := 0; i < 400; i += 2 {
		if a[i] != a[i+1] {
			t.Fatalf("group %s is split across %v and %v", exs[i].Group, a[i], a[i+1])
		}
		count[a[i]]++
	}
	// 200 pair groups: 20 test, 120 calibration, 60 fit.
	if count[testSplit] != 20 || count[calibrationSplit] != 120 || count[fitSplit] != 60 {
		t.Errorf("pair groups per split: %v", count)
	}
	pos, neg := map[split]int{}, map[split]int{}
	for i := 400; i < len(exs); i++ {
		if exs[i].Label {
			pos[a[i]]++
		} else {
			neg[a[i]]++
		}
	}
	// 50 of each label alone: 5 test, 30 calibration, 15 fit each.
	for _, m := range []map[split]int{pos, neg} {
		if m[testSplit] != 5 || m[calibrationSplit] != 30 || m[fitSplit] != 15 {
			t.Errorf("single examples per split: %v", m)
		}
	}
}

func equal(a, b []split) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The seeded hash spreads groups evenly: about half of many keys have
// the low bit set, for any seed.
func TestMixBalanced(t *testing.T) {
	for seed := uint64(0); seed < 4; seed++ {
		n := 0
		for i := 0; i < 10000; i++ {
			n += int(mix(seed, "g"+strconv.Itoa(i)) & 1)
		}
		if math.Abs(float64(n)-5000) > 200 {
			t.Errorf("seed %d: %d of 10000 low bits set", seed, n)
		}
	}
}
