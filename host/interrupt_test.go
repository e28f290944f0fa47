package host

import (
	"context"
	"testing"
	"time"
)

// Which runs get termination checks: the bundled modules none by default, a
// module given in Options.Wasm always by default, and either can be forced.
func TestInterruptDefaults(t *testing.T) {
	tinygo, err := ModuleTinyGo.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		opts   Options
		checks bool
	}{
		{"bundled, auto", Options{}, false},
		{"bundled, always", Options{Interrupt: InterruptAlways}, true},
		{"bundled, never", Options{Interrupt: InterruptNever}, false},
		{"custom, auto", Options{Wasm: tinygo}, true},
		{"custom, always", Options{Wasm: tinygo, Interrupt: InterruptAlways}, true},
		{"custom, never", Options{Wasm: tinygo, Interrupt: InterruptNever}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.opts.checks(); got != c.checks {
				t.Fatalf("checks() = %v, want %v", got, c.checks)
			}
			c.opts.PoolSize, c.opts.Timeout = 1, time.Minute
			g, err := New(context.Background(), c.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close(context.Background())
			if g.noInterrupt == c.checks {
				t.Fatalf("gate runs with checks = %v, want %v", !g.noInterrupt, c.checks)
			}
		})
	}
	if _, err := New(context.Background(), Options{Interrupt: 7}); err == nil {
		t.Fatal("Interrupt 7 accepted")
	}
}

func TestParseInterrupt(t *testing.T) {
	for _, i := range []Interrupt{InterruptAuto, InterruptAlways, InterruptNever} {
		if got, err := ParseInterrupt(i.String()); err != nil || got != i {
			t.Fatalf("ParseInterrupt(%q) = %v, %v", i.String(), got, err)
		}
	}
	if _, err := ParseInterrupt("sometimes"); err == nil {
		t.Fatal(`"sometimes" accepted`)
	}
}
