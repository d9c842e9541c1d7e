package facts

import (
	"math/rand/v2"
	"testing"
	"time"
)

// formatTime writes what Format(TimeFormat) writes, for any time.
func TestFormatTimeMatchesLayout(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ts := []time.Time{{}, time.Unix(0, 0), time.Unix(-1, 0), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2000, 2, 29, 12, 0, 0, 0, time.UTC), time.Date(2100, 3, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 3, 5, 7, 8, 9, 1e6, time.FixedZone("x", -5*3600))}
	for i := 0; i < 5000; i++ {
		ts = append(ts, time.Unix(rng.Int64N(1<<36)-1<<35, rng.Int64N(1e9)))
	}
	for _, tm := range ts {
		if got, want := formatTime(tm), tm.UTC().Format(TimeFormat); got != want {
			t.Fatalf("%v: got %q, want %q", tm, got, want)
		}
	}
}

// parseTime reads what time.Parse reads, and refuses what it refuses.
func TestParseTimeMatchesParse(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ss := []string{"", "2026-01-02T03:04:05.000Z", "2026-02-29T00:00:00.000Z", "2024-02-29T00:00:00.000Z",
		"2100-02-29T00:00:00.000Z", "2000-02-29T23:59:59.999Z", "2026-04-31T00:00:00.000Z", "2026-13-01T00:00:00.000Z",
		"2026-00-01T00:00:00.000Z", "2026-01-00T00:00:00.000Z", "2026-01-01T24:00:00.000Z", "2026-01-01T00:60:00.000Z",
		"2026-01-01T00:00:60.000Z", "2026-01-01T00:00:00.00aZ", "2026-01-01T00:00:00.000+", "0000-01-01T00:00:00.000Z",
		"2026-01-01t00:00:00.000Z", "2026-01-01T00:00:00.000z", "+026-01-01T00:00:00.000Z", "2026-01-01T00:00:00Z"}
	for i := 0; i < 5000; i++ {
		b := []byte(formatTime(time.Unix(rng.Int64N(1<<35), rng.Int64N(1e9))))
		if rng.IntN(3) == 0 {
			b[rng.IntN(len(b))] = "0123456789-:.TZ x"[rng.IntN(17)]
		}
		ss = append(ss, string(b))
	}
	for _, s := range ss {
		want, err := time.Parse(time.RFC3339Nano, s)
		got, ok := parseTime(s)
		if !ok {
			continue // parsed the general way
		}
		if err != nil || !got.Equal(want) || got.Location() != want.Location() {
			t.Fatalf("%q: parseTime %v, time.Parse %v (%v)", s, got, want, err)
		}
	}
	if _, ok := parseTime("2026-01-02T03:04:05.000Z"); !ok {
		t.Fatal("the stored layout takes the general way")
	}
}
