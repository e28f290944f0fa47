package gaps

import "time"

// Trend counts events per time bucket, overall by kind and per cluster. Its
// axis ends at the latest event, never at the clock, so the same events
// give the same page whenever it is made.
type Trend struct {
	// Unit is the bucket width: an hour, a day or a week (weeks start on
	// Monday, UTC).
	Unit  time.Duration
	Start time.Time // the first bucket's start
	// Overall[i] counts bucket i's events by kind, in the order of kinds.
	Overall [][4]int
	// Clusters[c][i] counts cluster c's events in bucket i (clusters in the
	// order given to NewTrend).
	Clusters [][]int
	// Before counts events older than the first bucket (the axis is capped
	// at MaxTrendBuckets); Untimed those without a time.
	Before, Untimed int
}

// MaxTrendBuckets caps the axis: a longer span moves to the next unit, and
// past weeks shows only the most recent MaxTrendBuckets weeks.
const MaxTrendBuckets = 60

const (
	hour = time.Hour
	day  = 24 * time.Hour
	week = 7 * day
)

// NewTrend buckets events by time. clusters are the clusters to count
// separately (their Events index events). It returns nil when no event has
// a time.
func NewTrend(events []Event, clusters []Cluster) *Trend {
	var first, last time.Time
	untimed := 0
	for i := range events {
		if !events[i].HasTime {
			untimed++
			continue
		}
		t := events[i].Time
		if first.IsZero() || t.Before(first) {
			first = t
		}
		if t.After(last) {
			last = t
		}
	}
	if first.IsZero() {
		return nil
	}
	tr := &Trend{Untimed: untimed}
	// Go's zero time is a Monday at midnight UTC, so Truncate aligns hours,
	// days and weeks on UTC boundaries.
	for _, u := range []time.Duration{hour, day, week} {
		tr.Unit = u
		if buckets(first, last, u) <= MaxTrendBuckets {
			break
		}
	}
	end := last.Truncate(tr.Unit)
	n := min(buckets(first, last, tr.Unit), MaxTrendBuckets)
	tr.Start = end.Add(-time.Duration(n-1) * tr.Unit)
	tr.Overall = make([][4]int, n)
	slot := func(ev *Event) int {
		if !ev.HasTime {
			return -1
		}
		i := int(ev.Time.Truncate(tr.Unit).Sub(tr.Start) / tr.Unit)
		if i < 0 {
			return -1
		}
		return i
	}
	for i := range events {
		ev := &events[i]
		s := slot(ev)
		if s < 0 {
			if ev.HasTime {
				tr.Before++
			}
			continue
		}
		for k, kind := range kinds {
			if ev.Kind == kind {
				tr.Overall[s][k]++
			}
		}
	}
	tr.Clusters = make([][]int, len(clusters))
	for c := range clusters {
		counts := make([]int, n)
		for _, i := range clusters[c].Events {
			if s := slot(&events[i]); s >= 0 {
				counts[s]++
			}
		}
		tr.Clusters[c] = counts
	}
	return tr
}

func buckets(first, last time.Time, unit time.Duration) int {
	return int(last.Truncate(unit).Sub(first.Truncate(unit))/unit) + 1
}

// BucketLabel names bucket i for an axis ("Mar 4", "Mar 4 14:00", "wk Mar 2").
func (t *Trend) BucketLabel(i int) string {
	s := t.Start.Add(time.Duration(i) * t.Unit).UTC()
	switch t.Unit {
	case hour:
		return s.Format("Jan 2 15:04")
	case week:
		return "wk " + s.Format("Jan 2")
	}
	return s.Format("Jan 2")
}

// BucketTitle names bucket i in full, for a tooltip.
func (t *Trend) BucketTitle(i int) string {
	s := t.Start.Add(time.Duration(i) * t.Unit).UTC()
	switch t.Unit {
	case hour:
		return s.Format("2006-01-02 15:04") + "–" + s.Add(hour).Format("15:04") + " UTC"
	case week:
		return "week of " + s.Format("2006-01-02")
	}
	return s.Format("2006-01-02")
}

// UnitName is "hour", "day" or "week".
func (t *Trend) UnitName() string {
	switch t.Unit {
	case hour:
		return "hour"
	case week:
		return "week"
	}
	return "day"
}
