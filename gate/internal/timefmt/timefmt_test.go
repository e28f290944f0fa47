package timefmt

import (
	"testing"
	"time"
)

func TestParseRFC3339Valid(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{
		{"1970-01-01T00:00:00Z", 0},
		{"2024-05-01T12:00:00Z", 1714564800},
		{"2024-05-01t12:00:00z", 1714564800},
		{"2024-05-01T14:30:00+02:30", 1714564800},
		{"2024-05-01T09:00:00-03:00", 1714564800},
		{"2024-05-01T12:00:00.999999999Z", 1714564800}, // fraction dropped
		{"2024-02-29T00:00:00Z", 1709164800},
		{"2000-02-29T23:59:59Z", 951868799},
		{"1969-12-31T23:59:59Z", -1},
		{"0000-01-01T00:00:00Z", -62167219200},
		{"9999-12-31T23:59:59Z", 253402300799},
		{"2016-12-31T23:59:60Z", 1483228800}, // leap second = next second
	}
	for _, tc := range tests {
		got, msg := ParseRFC3339(tc.in)
		if msg != "" || got != tc.want {
			t.Errorf("ParseRFC3339(%q) = %d %q, want %d", tc.in, got, msg, tc.want)
		}
	}
}

func TestParseRFC3339Invalid(t *testing.T) {
	for _, in := range []string{
		"", "2024-05-01", "2024-05-01T12:00:00", "2024-05-01 12:00:00Z", "2024-05-01T12:00Z",
		"2024-5-01T12:00:00Z", "2024-05-01T12:00:00.Z", "2024-05-01T12:00:00+0200", "2024-05-01T12:00:00+02",
		"2024-05-01T12:00:00+24:00", "2024-05-01T12:00:00+02:60", "2024-05-01T12:00:00ZZ", "2024-05-01T12:00:00Z ",
		"2023-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2024-13-01T00:00:00Z", "2024-00-01T00:00:00Z",
		"2024-04-31T00:00:00Z", "2024-05-00T00:00:00Z", "2024-05-01T24:00:00Z", "2024-05-01T12:60:00Z",
		"2024-05-01T12:00:61Z", "-024-05-01T12:00:00Z", "2024-05-01T12:00:00\u00a0Z", "２０２４-05-01T12:00:00Z",
		"2024-05-01T12:00:00UTC", "2024-05-01T12:00:00+02:00:00",
	} {
		if got, msg := ParseRFC3339(in); msg == "" {
			t.Errorf("ParseRFC3339(%q) = %d, want an error", in, got)
		}
	}
}

// Cross-check against package time over a spread of instants and offsets.
func TestParseRFC3339MatchesTime(t *testing.T) {
	zones := []*time.Location{time.UTC, time.FixedZone("", 5*3600+45*60), time.FixedZone("", -(9*3600 + 30*60))}
	for u := int64(-62135596800); u < 253402300799; u += 7777777 + u%1000 {
		for _, z := range zones {
			s := time.Unix(u, 0).In(z).Format(time.RFC3339)
			if got, msg := ParseRFC3339(s); msg != "" || got != u {
				t.Fatalf("ParseRFC3339(%q) = %d %q, want %d", s, got, msg, u)
			}
		}
	}
}
