// Package timefmt reads RFC 3339 timestamps without package time.
package timefmt

// ParseRFC3339 converts an RFC 3339 timestamp to Unix seconds. It is written
// by hand because the gate needs nothing else from package time, which would
// add its zone machinery to every Wasm module.
//
// Accepted: YYYY-MM-DDTHH:MM:SS[.fraction](Z|+hh:mm|-hh:mm), with 'T' and 'Z'
// in either case (RFC 3339 section 5.6 allows lower case). Rejected: a space
// instead of 'T', a missing offset, a date that does not exist (2023-02-29),
// and out-of-range fields. The fraction is dropped (the result is whole
// seconds, rounded down), which is all freshness needs. A leap second
// (SS = 60) is accepted and, as in POSIX time, equals the next second.
// On error msg says what is wrong (for the message after the field name).
func ParseRFC3339(s string) (sec int64, msg string) {
	const bad = "must be an RFC 3339 timestamp like 2024-05-01T12:00:00Z"
	if len(s) < len("2006-01-02T15:04:05") {
		return 0, bad
	}
	num := func(i, n int) int {
		v := 0
		for j := i; j < i+n; j++ {
			c := s[j]
			if c < '0' || c > '9' {
				return -1
			}
			v = v*10 + int(c-'0')
		}
		return v
	}
	year, month, day := num(0, 4), num(5, 2), num(8, 2)
	hour, min, secs := num(11, 2), num(14, 2), num(17, 2)
	if year < 0 || month < 0 || day < 0 || hour < 0 || min < 0 || secs < 0 ||
		s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') || s[13] != ':' || s[16] != ':' {
		return 0, bad
	}
	if month < 1 || month > 12 || day < 1 || day > daysIn(year, month) {
		return 0, "is not a valid date"
	}
	if hour > 23 || min > 59 || secs > 60 {
		return 0, "is not a valid time of day"
	}
	i := 19
	if i < len(s) && s[i] == '.' {
		i++
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return 0, bad
		}
	}
	if i >= len(s) {
		return 0, "must have a time zone offset (Z or +hh:mm)"
	}
	offset := 0
	switch s[i] {
	case 'Z', 'z':
		i++
	case '+', '-':
		if len(s)-i != 6 || s[i+3] != ':' {
			return 0, bad
		}
		oh, om := num(i+1, 2), num(i+4, 2)
		if oh < 0 || om < 0 {
			return 0, bad
		}
		if oh > 23 || om > 59 {
			return 0, "has an invalid time zone offset"
		}
		offset = oh*3600 + om*60
		if s[i] == '-' {
			offset = -offset
		}
		i += 6
	default:
		return 0, "must have a time zone offset (Z or +hh:mm)"
	}
	if i != len(s) {
		return 0, bad
	}
	days := daysFromCivil(year, month, day)
	return days*86400 + int64(hour*3600+min*60+secs) - int64(offset), ""
}

func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func daysIn(y, m int) int {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil is the number of days from 1970-01-01 to y-m-d in the
// proleptic Gregorian calendar (Howard Hinnant's algorithm, exact for every
// year 0000-9999 with integer arithmetic only).
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}
