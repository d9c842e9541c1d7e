package facts

import "time"

// A room prints a lease time for every open claim and reads every
// claim's time: these do it without time's layout machinery, for the one
// layout facts store.

// formatTime is t.UTC().Format(TimeFormat).
func formatTime(t time.Time) string {
	sec := t.Unix()
	const maxSec = 253402300799 // 9999-12-31T23:59:59Z
	if sec < 0 || sec > maxSec {
		return t.UTC().Format(TimeFormat)
	}
	days, rem := sec/86400, sec%86400
	y, m, d := civil(days)
	var b [24]byte
	put2 := func(at int, v int64) { b[at], b[at+1] = byte('0'+v/10), byte('0'+v%10) }
	put2(0, int64(y)/100)
	put2(2, int64(y)%100)
	b[4] = '-'
	put2(5, int64(m))
	b[7] = '-'
	put2(8, int64(d))
	b[10] = 'T'
	put2(11, rem/3600)
	b[13] = ':'
	put2(14, rem/60%60)
	b[16] = ':'
	put2(17, rem%60)
	ms := int64(t.Nanosecond() / 1e6)
	b[19], b[20], b[21], b[22], b[23] = '.', byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10), 'Z'
	return string(b[:])
}

// civil is the proleptic Gregorian date of a day counted from 1970-01-01
// (days ≥ 0), by Howard Hinnant's days-to-civil.
func civil(days int64) (y, m, d int) {
	z := days + 719468
	era := z / 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = int(doy - (153*mp+2)/5 + 1)
	m = int(mp + 3)
	if m > 12 {
		m -= 12
	}
	y = int(yoe + era*400)
	if m <= 2 {
		y++
	}
	return y, m, d
}

// parseTime is time.Parse(time.RFC3339Nano, s) for the layout facts
// store (2006-01-02T15:04:05.000Z); ok is false for any other text, which
// the caller parses the general way.
func parseTime(s string) (t time.Time, ok bool) {
	if len(s) != len(TimeFormat) || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != '.' || s[23] != 'Z' {
		return time.Time{}, false
	}
	num := func(i, n int) int {
		v := 0
		for _, c := range []byte(s[i : i+n]) {
			if c < '0' || c > '9' {
				return -1
			}
			v = v*10 + int(c-'0')
		}
		return v
	}
	y, mo, d, h, mi, sec, ms := num(0, 4), num(5, 2), num(8, 2), num(11, 2), num(14, 2), num(17, 2), num(20, 3)
	if y < 0 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59 || ms < 0 {
		return time.Time{}, false
	}
	if d > 28 && d > daysIn(mo, y) {
		return time.Time{}, false
	}
	return time.Date(y, time.Month(mo), d, h, mi, sec, ms*1e6, time.UTC), true
}

func daysIn(m, y int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
