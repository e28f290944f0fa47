package host

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
)

// The whole directory is embedded, not the two files by name: a pattern naming
// a missing file is a compile error, and a fresh clone has no built modules
// (only the README). A missing module is a run-time error instead.
//
//go:embed wasm
var wasmFS embed.FS

// Module selects which build of the guest a Gate runs.
type Module int

const (
	// ModuleTinyGo is the TinyGo build (host/wasm/ctxgate.wasm): small and
	// fast to instantiate. The default.
	ModuleTinyGo Module = iota
	// ModuleGo is the standard-Go build (host/wasm/ctxgate-go.wasm).
	ModuleGo
)

var moduleFiles = [...]string{ModuleTinyGo: "ctxgate.wasm", ModuleGo: "ctxgate-go.wasm"}
var moduleNames = [...]string{ModuleTinyGo: "tinygo", ModuleGo: "go"}

func (m Module) String() string {
	if m < 0 || int(m) >= len(moduleNames) {
		return "Module(" + fmt.Sprint(int(m)) + ")"
	}
	return moduleNames[m]
}

// File is the module's file name under host/wasm.
func (m Module) File() string {
	if m < 0 || int(m) >= len(moduleFiles) {
		return ""
	}
	return moduleFiles[m]
}

// ParseModule reads a module name as the CLI spells it: "tinygo" or "go".
func ParseModule(s string) (Module, error) {
	for i, n := range moduleNames {
		if n == s {
			return Module(i), nil
		}
	}
	return 0, fmt.Errorf("unknown module %q (want tinygo or go)", s)
}

// Modules lists every module this binary knows, built or not.
func Modules() []ModuleInfo {
	out := make([]ModuleInfo, 0, len(moduleFiles))
	for i := range moduleFiles {
		out = append(out, Module(i).Info())
	}
	return out
}

// ModuleInfo describes one embedded module.
type ModuleInfo struct {
	Module Module
	File   string
	Built  bool
	Size   int
	SHA256 string // hex
}

// Info describes the embedded module m.
func (m Module) Info() ModuleInfo {
	info := ModuleInfo{Module: m, File: m.File()}
	b, err := m.Bytes()
	if err != nil {
		return info
	}
	sum := sha256.Sum256(b)
	info.Built, info.Size, info.SHA256 = true, len(b), hex.EncodeToString(sum[:])
	return info
}

// Bytes returns the embedded module, or an error wrapping ErrNotBuilt.
func (m Module) Bytes() ([]byte, error) {
	name := m.File()
	if name == "" {
		return nil, fmt.Errorf("ctxgate: unknown module %d", int(m))
	}
	b, err := fs.ReadFile(wasmFS, "wasm/"+name)
	if err != nil || len(b) == 0 {
		return nil, fmt.Errorf("%w (host/wasm/%s is missing)", ErrNotBuilt, name)
	}
	return b, nil
}
