package policies_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/gate/bundle"
	"github.com/ctxgate/ctxgate/policies"
)

var update = flag.Bool("update", false, "add the presets' current versions to versions.txt")

const recordFile = "versions.txt"

// A preset's bytes never change under the same version: decisions,
// receipts, calibration reports and signed bundles name a policy by name,
// version and sha256, and two policies under one name and version would
// make them ambiguous. versions.txt records the sha256 of each preset's
// file for every version it has had; a change to a file fails here until
// its version is raised, and -update then records the new version. A
// recorded line never changes, and a version never goes back.
func TestVersionsRecorded(t *testing.T) {
	recorded, order := readRecord(t)
	var add []string
	for _, name := range policies.Names() {
		raw, _ := policies.Get(name)
		var doc struct{ Version string }
		if err := json.Unmarshal(raw, &doc); err != nil || doc.Version == "" {
			t.Fatalf("%s.json has no version: %v", name, err)
		}
		sum := sha256.Sum256(raw)
		hexSum := hex.EncodeToString(sum[:])
		key := name + " " + doc.Version
		want, ok := recorded[key]
		switch {
		case ok && want != hexSum:
			t.Errorf("policies/%s.json changed (sha256 %s) but its version is still %s, recorded with sha256 %s: raise \"version\", then go test ./policies -run TestVersionsRecorded -update",
				name, hexSum[:12], doc.Version, want[:12])
		case !ok && *update:
			add = append(add, key+" "+hexSum)
		case !ok:
			t.Errorf("policies/%s.json version %s is not in policies/%s: go test ./policies -run TestVersionsRecorded -update", name, doc.Version, recordFile)
		}
		for _, k := range order {
			if n, v, _ := strings.Cut(k, " "); n == name && bundle.CompareVersions(doc.Version, v) < 0 {
				t.Errorf("policies/%s.json's version %s sorts before the recorded %s: versions only go up", name, doc.Version, v)
			}
		}
	}
	if len(add) == 0 {
		return
	}
	f, err := os.OpenFile(recordFile, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, l := range add {
		f.WriteString(l + "\n")
		t.Logf("recorded %s", l)
	}
}

// readRecord reads versions.txt: "name version sha256" lines, comments
// after #. A name and version recorded twice is an error.
func readRecord(t *testing.T) (map[string]string, []string) {
	f, err := os.Open(recordFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	var order []string
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 3 || len(fields[2]) != 64 {
			t.Fatalf("%s:%d: want \"name version sha256\", got %q", recordFile, n, line)
		}
		key := fields[0] + " " + fields[1]
		if _, dup := out[key]; dup {
			t.Fatalf("%s:%d: %s recorded twice", recordFile, n, key)
		}
		out[key] = fields[2]
		order = append(order, key)
	}
	return out, order
}
