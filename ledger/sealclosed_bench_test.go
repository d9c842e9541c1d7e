package ledger

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/git-rally/git-rally/facts"
)

// BenchmarkAppendClosing times the appends that close a segment, each
// with its segment blob written (seal) and, alternating in the same run
// on the same ledger, without (plain, as before): a 100-fact append that
// does not fit its segment (200 facts in it), and a one-fact append on a
// new day (the day before holds a segment of 151 facts). It reports the
// median of each and their ratio.
func BenchmarkAppendClosing(b *testing.B) {
	for _, tc := range []struct {
		name  string
		pre   int           // facts appended before each timed append (untimed)
		facts int           // facts of the timed append
		step  time.Duration // the clock before it
	}{
		{"overflow", 100, 100, time.Minute},
		{"newday", 150, 1, 24 * time.Hour},
	} {
		b.Run(tc.name, func(b *testing.B) {
			now := t0
			_, cs := network(b, 1, &now)
			l := cs[0].ledger(b)
			k := 0
			add := func(n int) {
				k++
				if _, err := l.Append(func(*facts.State, time.Time) ([]*facts.Fact, error) {
					fs := make([]*facts.Fact, n)
					for j := range fs {
						fs[j] = &facts.Fact{Kind: facts.KindNote, Tool: "bench", Subject: fmt.Sprintf("note %d.%d", k, j)}
					}
					return fs, nil
				}); err != nil {
					b.Fatal(err)
				}
			}
			var seal, plain, sealCPU, plainCPU []time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				add(tc.pre)
				now = now.Add(tc.step)
				l.noSeal = i%2 == 1
				b.StartTimer()
				start, cpu := time.Now(), cpuTime()
				add(tc.facts)
				d, c := time.Since(start), cpuTime()-cpu
				if l.noSeal {
					plain, plainCPU = append(plain, d), append(plainCPU, c)
				} else {
					seal, sealCPU = append(seal, d), append(sealCPU, c)
				}
			}
			b.StopTimer()
			l.noSeal = false
			if len(plain) > 0 {
				ms, mp := median(seal), median(plain)
				b.ReportMetric(float64(ms.Microseconds())/1000, "ms/seal")
				b.ReportMetric(float64(mp.Microseconds())/1000, "ms/plain")
				b.ReportMetric(float64(ms)/float64(mp), "seal/plain")
				cs, cp := median(sealCPU), median(plainCPU)
				b.ReportMetric(float64(cs.Microseconds())/1000, "cpu-ms/seal")
				b.ReportMetric(float64(cp.Microseconds())/1000, "cpu-ms/plain")
				b.ReportMetric(float64(cs)/float64(cp), "cpu-seal/plain")
			}
		})
	}
}

// cpuTime is the process's CPU time (user and system) so far: less
// swayed by other processes on a shared machine than the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[len(s)/2]
}
