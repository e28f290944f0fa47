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

// timeline counts a streamed log's events per time bucket as they come, at
// the unit NewTrend would pick for the span seen so far: the unit only
// coarsens as the span grows (hours fold into days, days into weeks, both
// exactly), so the counts at the end are NewTrend's.
type timeline struct {
	first, last time.Time
	unit        time.Duration
	overall     map[int64][4]int // bucket start (Unix seconds) -> events by kind
	kinds       [4]int           // every event by kind, timed or not
	untimed     int
}

func bucketOf(t time.Time, unit time.Duration) int64 { return t.Truncate(unit).Unix() }

func kindIndex(kind string) int {
	for k, name := range kinds {
		if name == kind {
			return k
		}
	}
	return -1
}

// add counts ev and reports whether the unit coarsened (the caller then
// rebuckets what it keeps per bucket).
func (tl *timeline) add(ev *Event) (coarsened bool) {
	k := kindIndex(ev.Kind)
	if k >= 0 {
		tl.kinds[k]++
	}
	if !ev.HasTime {
		tl.untimed++
		return false
	}
	if tl.first.IsZero() || ev.Time.Before(tl.first) {
		tl.first = ev.Time
	}
	if ev.Time.After(tl.last) {
		tl.last = ev.Time
	}
	for tl.unit != week && buckets(tl.first, tl.last, tl.unit) > MaxTrendBuckets {
		if tl.unit == hour {
			tl.unit = day
		} else {
			tl.unit = week
		}
		coarsened = true
	}
	if coarsened {
		o := make(map[int64][4]int, len(tl.overall))
		for b, c := range tl.overall {
			nb := bucketOf(time.Unix(b, 0), tl.unit)
			x := o[nb]
			for i := range x {
				x[i] += c[i]
			}
			o[nb] = x
		}
		tl.overall = o
	}
	if tl.overall == nil {
		tl.overall = map[int64][4]int{}
	}
	if k >= 0 {
		b := bucketOf(ev.Time, tl.unit)
		x := tl.overall[b]
		x[k]++
		tl.overall[b] = x
	}
	return coarsened
}

// bucket is ev's bucket at the current unit.
func (tl *timeline) bucket(ev *Event) (int64, bool) {
	if !ev.HasTime {
		return 0, false
	}
	return bucketOf(ev.Time, tl.unit), true
}

// trend is NewTrend from the counts: clusters' hist are theirs.
func (tl *timeline) trend(clusters []Cluster) *Trend {
	if tl.first.IsZero() {
		return nil
	}
	tr := &Trend{Unit: tl.unit, Untimed: tl.untimed}
	end := tl.last.Truncate(tl.unit)
	n := min(buckets(tl.first, tl.last, tl.unit), MaxTrendBuckets)
	tr.Start = end.Add(-time.Duration(n-1) * tl.unit)
	slot := func(b int64) int {
		return int(time.Unix(b, 0).Sub(tr.Start) / tl.unit)
	}
	tr.Overall = make([][4]int, n)
	for b, c := range tl.overall {
		if s := slot(b); s >= 0 {
			for k := range c {
				tr.Overall[s][k] += c[k]
			}
		} else {
			for k := range c {
				tr.Before += c[k]
			}
		}
	}
	tr.Clusters = make([][]int, len(clusters))
	for i := range clusters {
		counts := make([]int, n)
		for b, c := range clusters[i].hist {
			if s := slot(b); s >= 0 {
				counts[s] += int(c)
			}
		}
		tr.Clusters[i] = counts
	}
	return tr
}
