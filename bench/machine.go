package bench

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Machine describes where the figures were taken.
type Machine struct {
	CPU        string
	Cores      int
	GOMAXPROCS int
	Go         string
	TinyGo     string
	Load       string // /proc/loadavg at the start: the machine is shared
}

// ThisMachine reads /proc/cpuinfo and asks tinygo (the TINYGO path, else
// the project's cached install, else PATH) for its version.
func ThisMachine() Machine {
	m := Machine{CPU: "unknown", Cores: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), Go: runtime.Version(), TinyGo: "not found"}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		s := bufio.NewScanner(f)
		for s.Scan() {
			if k, v, ok := strings.Cut(s.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			m.Load = strings.Join(f[:3], " ")
		}
	}
	if out, err := exec.Command(findTinyGo(), "version").Output(); err == nil {
		m.TinyGo = strings.TrimSpace(string(out))
	}
	return m
}

func findTinyGo() string {
	if p := os.Getenv("TINYGO"); p != "" {
		return p
	}
	cache := os.Getenv("CTXGATE_CACHE")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache", "ctxgate")
	}
	if m, _ := filepath.Glob(filepath.Join(cache, "tinygo-*", "bin", "tinygo")); len(m) > 0 {
		return m[len(m)-1]
	}
	return "tinygo"
}
