package gaps

import (
	"reflect"
	"testing"
	"time"
)

func timed(kind string, t time.Time) Event {
	return Event{Kind: kind, Query: "q", Time: t, HasTime: true}
}

func TestTrendUnits(t *testing.T) {
	t0 := time.Date(2026, 3, 4, 22, 30, 0, 0, time.UTC) // a Wednesday
	for _, tc := range []struct {
		name  string
		span  time.Duration
		unit  time.Duration
		n     int
		start time.Time
	}{
		{"one event", 0, hour, 1, time.Date(2026, 3, 4, 22, 0, 0, 0, time.UTC)},
		{"hours", 30 * hour, hour, 31, time.Date(2026, 3, 4, 22, 0, 0, 0, time.UTC)},
		{"59 hours still hourly", 59 * hour, hour, 60, time.Date(2026, 3, 4, 22, 0, 0, 0, time.UTC)},
		{"days", 10 * day, day, 11, time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC)},
		{"weeks start on Monday", 100 * day, week, 15, time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs := []Event{timed(KindRefusalHard, t0), timed(KindLowConfidence, t0.Add(tc.span)), {Kind: KindThumbsDown, Query: "q"}}
			tr := NewTrend(evs, nil)
			if tr.Unit != tc.unit || len(tr.Overall) != tc.n || !tr.Start.Equal(tc.start) {
				t.Fatalf("unit %v, %d buckets from %v; want %v, %d from %v", tr.Unit, len(tr.Overall), tr.Start, tc.unit, tc.n, tc.start)
			}
			if tr.Untimed != 1 || tr.Before != 0 {
				t.Errorf("untimed %d before %d", tr.Untimed, tr.Before)
			}
			if tr.Overall[0][0] != 1 || tr.Overall[tc.n-1][3] != 1 {
				t.Errorf("first and last buckets %v %v", tr.Overall[0], tr.Overall[tc.n-1])
			}
		})
	}
}

// Past MaxTrendBuckets weeks the axis keeps the most recent ones and counts
// what is older.
func TestTrendCapped(t *testing.T) {
	t0 := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	evs := []Event{timed(KindRefusalHard, t0), timed(KindRefusalHard, t0.Add(3*365*day)), timed(KindRefusalSoft, t0.Add(3*365*day-hour))}
	tr := NewTrend(evs, []Cluster{{Events: []int{0, 2}}})
	if tr.Unit != week || len(tr.Overall) != MaxTrendBuckets || tr.Before != 1 {
		t.Fatalf("unit %v, %d buckets, %d before", tr.Unit, len(tr.Overall), tr.Before)
	}
	last := tr.Overall[MaxTrendBuckets-1]
	if last != [4]int{1, 1, 0, 0} {
		t.Errorf("last bucket %v", last)
	}
	want := make([]int, MaxTrendBuckets)
	want[MaxTrendBuckets-1] = 1
	if !reflect.DeepEqual(tr.Clusters[0], want) {
		t.Errorf("cluster counts %v", tr.Clusters[0])
	}
	if NewTrend([]Event{{Kind: KindRefusalHard, Query: "q"}}, nil) != nil {
		t.Error("no times: want no trend")
	}
}

func TestTrendLabels(t *testing.T) {
	tr := &Trend{Unit: hour, Start: time.Date(2026, 3, 4, 14, 0, 0, 0, time.UTC)}
	if l, tt := tr.BucketLabel(1), tr.BucketTitle(1); l != "Mar 4 15:00" || tt != "2026-03-04 15:00–16:00 UTC" {
		t.Errorf("hour: %q %q", l, tt)
	}
	tr.Unit, tr.Start = week, time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	if l, tt := tr.BucketLabel(1), tr.BucketTitle(1); l != "wk Mar 9" || tt != "week of 2026-03-09" {
		t.Errorf("week: %q %q", l, tt)
	}
}

func TestNiceMax(t *testing.T) {
	for n, want := range map[int]int{0: 1, 1: 1, 2: 2, 3: 5, 6: 10, 11: 20, 21: 50, 99: 100, 101: 200} {
		if got := niceMax(n); got != want {
			t.Errorf("niceMax(%d) = %d, want %d", n, got, want)
		}
	}
}
