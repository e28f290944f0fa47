package eval

import "github.com/ctxgate/ctxgate/internal/keyhash"

// IsTune puts an item in the tuning half or the held-out half by one bit of
// a hash of "set:id". A hash, not file order, so that the split does not
// follow how the files were sorted (ClapNQ lists answerable first), and an
// item's half never changes when items are added.
func IsTune(set, id string) bool {
	return keyhash.Sum64(set+":"+id)&1 == 0
}
