package facts

import (
	"math/rand/v2"
	"testing"
	"time"
)

// formatTime writes what Format(TimeFormat) writes, for any time.
func TestFormatTimeMatchesLayout(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ts := []time.Time{{}, time.Unix(0, 0), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 3, 5, 7, 8, 9, 1e6, time.FixedZone("x", -5*3600))}
	for i := 0; i < 2000; i++ {
		ts = append(ts, time.Unix(rng.Int64N(1<<36)-1<<35, rng.Int64N(1e9)))
	}
	for _, tm := range ts {
		if got, want := formatTime(tm), tm.UTC().Format(TimeFormat); got != want {
			t.Fatalf("%v: got %q, want %q", tm, got, want)
		}
	}
}
