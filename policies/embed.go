// Package policies holds the preset policy documents (docs/policy.md),
// embedded so every build of the gate carries them byte for byte.
package policies

import "embed"

//go:embed *.json
var files embed.FS

// names lists the presets in a fixed order (no directory iteration reaches
// callers, so the order never depends on the filesystem).
var names = []string{"default", "wikigr", "sufficient-context", "support-agent", "rag-confidence"}

// Names returns the preset names, "default" first.
func Names() []string { return append([]string(nil), names...) }

// Get returns the raw JSON of the named preset.
func Get(name string) ([]byte, bool) {
	for _, n := range names {
		if n == name {
			b, err := files.ReadFile(n + ".json")
			return b, err == nil
		}
	}
	return nil, false
}

// Default returns the raw JSON of the default policy.
func Default() []byte {
	b, _ := Get("default")
	return b
}
