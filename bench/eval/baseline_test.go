package eval

import (
	"errors"
	"testing"
)

// loadData loads both sets or skips the test when the data is absent.
func loadData(t testing.TB) (*DL19, []ClapNQ) {
	t.Helper()
	d, c, err := LoadSetsFrom(".")
	if errors.Is(err, ErrNoData) {
		t.Skip("skipping: ../shared/data is absent; the quality evaluation needs the labeled data")
	}
	if err != nil {
		t.Fatal(err)
	}
	return d, c
}

func TestBaselinesPrint(t *testing.T) {
	d, c := loadData(t)
	for _, b := range Baselines(d, c, 20) {
		t.Logf("%-7s %-24s %-28s tune %.4f (%d/%d) held %.4f (%d/%d) all %.4f", b.Set, b.Level, b.Signal, b.Tune, b.PosTune, b.NTune, b.Held, b.PosHeld, b.NHeld, b.All)
	}
}
