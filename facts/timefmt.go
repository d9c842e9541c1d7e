package facts

import "time"

// formatTime is t.UTC().Format(TimeFormat) without the layout's parse: a
// room prints a lease time for every open claim.
func formatTime(t time.Time) string {
	t = t.UTC()
	y, mo, d := t.Date()
	if y < 0 || y > 9999 {
		return t.Format(TimeFormat)
	}
	h, mi, s := t.Clock()
	ms := t.Nanosecond() / 1e6
	var b [24]byte
	put := func(at, v, n int) {
		for i := at + n - 1; i >= at; i-- {
			b[i] = byte('0' + v%10)
			v /= 10
		}
	}
	put(0, y, 4)
	b[4] = '-'
	put(5, int(mo), 2)
	b[7] = '-'
	put(8, d, 2)
	b[10] = 'T'
	put(11, h, 2)
	b[13] = ':'
	put(14, mi, 2)
	b[16] = ':'
	put(17, s, 2)
	b[19] = '.'
	put(20, ms, 3)
	b[23] = 'Z'
	return string(b[:])
}
