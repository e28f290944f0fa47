package calibrate

import (
	"math"
	"sort"

	"github.com/ctxgate/ctxgate/internal/keyhash"
)

// split is where an example goes.
type split uint8

const (
	fitSplit         split = iota // fits the weights
	calibrationSplit              // chooses the threshold (and reports)
	testSplit                     // only reports
)

func (s split) String() string {
	return [...]string{"fit", "calibration", "test"}[s]
}

// assignSplits puts whole groups into the test, calibration and fit splits
// by a seeded hash of the group key (keys[i] is example i's: evidence.go),
// so that examples sharing a group (one question asked against two
// retrievals, say) never sit on both sides of the fit/calibration line, and
// the same data and seed always split the same way. Groups are stratified by the labels they hold (only 0, only 1,
// both): each stratum is ordered by hash and cut by the shares, so every
// split gets its share of each label rather than what chance gives.
func assignSplits(exs []Example, keys []string, seed uint64, calShare, testShare float64) []split {
	type group struct {
		key     string
		hash    uint64
		members []int
		stratum int
	}
	byKey := map[string]*group{}
	var groups []*group
	for i := range exs {
		k := keys[i]
		g := byKey[k]
		if g == nil {
			g = &group{key: k, hash: mix(seed, k)}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.members = append(g.members, i)
		if exs[i].Label {
			g.stratum |= 2
		} else {
			g.stratum |= 1
		}
	}
	out := make([]split, len(exs))
	for stratum := 1; stratum <= 3; stratum++ {
		var gs []*group
		for _, g := range groups {
			if g.stratum == stratum {
				gs = append(gs, g)
			}
		}
		sort.Slice(gs, func(a, b int) bool {
			if gs[a].hash != gs[b].hash {
				return gs[a].hash < gs[b].hash
			}
			return gs[a].key < gs[b].key
		})
		nTest := int(math.Round(testShare * float64(len(gs))))
		nCal := int(math.Round(calShare * float64(len(gs))))
		for j, g := range gs {
			s := fitSplit
			switch {
			case j < nTest:
				s = testSplit
			case j < nTest+nCal:
				s = calibrationSplit
			}
			for _, i := range g.members {
				out[i] = s
			}
		}
	}
	return out
}

// mix hashes a seed and a key (keyhash.Sum64 of the seed's 8 bytes,
// little-endian, then the key).
func mix(seed uint64, key string) uint64 {
	var b [8]byte
	for i := range b {
		b[i] = byte(seed >> (8 * i))
	}
	return keyhash.Sum64(string(b[:]), key)
}
