package server

import (
	"strings"
	"testing"
)

// TestIDs: ids are distinct, 43 base64url characters, and valid only for
// their own domain and key; any change to one is caught.
func TestIDs(t *testing.T) {
	k, _ := newIDIssuer(nil)
	k2, _ := newIDIssuer(nil)
	seen := map[string]bool{}
	for range 1000 {
		id := k.issue(idDecision)
		if len(id) != idLen || seen[id] || !k.valid(id, idDecision) || k.valid(id, idFault) || k2.valid(id, idDecision) {
			t.Fatalf("id %q", id)
		}
		seen[id] = true
	}
	id := k.issue(idDecision)
	for i := range id {
		b := []byte(id)
		b[i] ^= 1 // stays printable; may leave the alphabet (then invalid too)
		if k.valid(string(b), idDecision) {
			t.Fatalf("id changed at %d still valid: %s", i, b)
		}
	}
	for _, bad := range []string{"", id[:42], id + "A", strings.Repeat("=", 43), id[:42] + "="} {
		if k.valid(bad, idDecision) {
			t.Fatalf("%q valid", bad)
		}
	}
}

func BenchmarkIssueID(b *testing.B) {
	k, _ := newIDIssuer(nil)
	b.ReportAllocs()
	for b.Loop() {
		k.issue(idDecision)
	}
}

func BenchmarkValidID(b *testing.B) {
	k, _ := newIDIssuer(nil)
	id := k.issue(idDecision)
	b.ReportAllocs()
	for b.Loop() {
		k.valid(id, idDecision)
	}
}
