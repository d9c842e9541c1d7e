package ledger_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/git-rally/git-rally/bench/ledgergen"
	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/ledger"
	"github.com/git-rally/git-rally/refs"
)

// Benchmarks of the ledger's append and read paths on generated ledgers
// (bench/ledgergen). They run only with -bench; the 10k sizes are skipped
// under -short. Whole-process figures against the bars come from
// bench/run.sh.

var benchSizes = []int{1000, 10000}

func sizeName(n int) string { return fmt.Sprintf("facts=%dk", n/1000) }

// benchLedger builds a repository with an n-fact ledger and returns its
// common dir.
func benchLedger(b *testing.B, n int) string {
	b.Helper()
	if n > 1000 && testing.Short() {
		b.Skip("large ledger skipped under -short")
	}
	dir := b.TempDir()
	if _, err := refs.Git(dir, nil, "init", "-q", "."); err != nil {
		b.Fatal(err)
	}
	common := filepath.Join(dir, ".git")
	l, err := ledger.Open(common, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	if _, err := ledgergen.Build(l, ledgergen.Options{Facts: n, Seed: int64(n), End: time.Now().Add(-time.Minute)}); err != nil {
		b.Fatal(err)
	}
	return common
}

// claimFn claims one of 16 files; claiming one again renews it, so the
// benchmark's own claims do not pile up in the projection as b.N grows.
func claimFn(i int) facts.AppendFunc {
	return facts.Claim(facts.ClaimRequest{Owner: facts.Owner{Tool: "bench:appender"},
		Scopes: []string{fmt.Sprintf("file:src/bench/b%d.go", i%16)}})
}

// BenchmarkAppend is one claim the way a process makes it: open the
// ledger, append, close.
func BenchmarkAppend(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(sizeName(n), func(b *testing.B) {
			common := benchLedger(b, n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				l, err := ledger.Open(common, nil)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := l.Append(claimFn(i)); err != nil {
					b.Fatal(err)
				}
				l.Close()
			}
		})
	}
}

// BenchmarkRead measures the three read paths: the warm cache (the head
// did not move), a catch-up of 100 new facts by tree diff, and a rebuild
// from the tree with no cache.
func BenchmarkRead(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(sizeName(n), func(b *testing.B) {
			common := benchLedger(b, n)
			state := filepath.Join(common, "rally", "cache", "state.bin")
			b.Run("warm", func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					readOnce(b, common)
				}
			})
			b.Run("catchup100", func(b *testing.B) {
				saved, err := os.ReadFile(state)
				if err != nil {
					b.Fatal(err)
				}
				l, err := ledger.Open(common, nil)
				if err != nil {
					b.Fatal(err)
				}
				_, err = l.Append(func(st *facts.State, now time.Time) ([]*facts.Fact, error) {
					out := make([]*facts.Fact, 100)
					for i := range out {
						out[i] = &facts.Fact{Kind: facts.KindNote, Tool: "bench:writer", Subject: fmt.Sprintf("note %d", i)}
					}
					return out, nil
				})
				l.Close()
				if err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					if err := os.WriteFile(state, saved, 0o666); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					if st := readOnce(b, common); st.Facts < n+100 {
						b.Fatalf("read %d facts, want %d", st.Facts, n+100)
					}
				}
			})
			b.Run("rebuild", func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					os.RemoveAll(filepath.Join(common, "rally", "cache"))
					b.StartTimer()
					readOnce(b, common)
				}
			})
		})
	}
}

func readOnce(b *testing.B, common string) *facts.State {
	l, err := ledger.Open(common, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	st, err := l.Read()
	if err != nil {
		b.Fatal(err)
	}
	return st
}

// BenchmarkConcurrentAppends is issue 14's "8 writers" in one process:
// 8 goroutines, each opening the ledger, appending a note and closing it
// in a loop (every Open has its own lock files, so they queue as
// processes do), b.N appends in all. Without process start-up, the time
// per append is about the serialized part: the ledger lock and what is
// done under it. The whole-process figure is bench/run.sh's writers case.
func BenchmarkConcurrentAppends(b *testing.B) {
	const writers = 8
	common := benchLedger(b, 10000)
	lat := make([][]time.Duration, writers)
	next := make(chan int, b.N)
	for i := 0; i < b.N; i++ {
		next <- i
	}
	close(next)
	errs := make(chan error, writers)
	b.ResetTimer()
	start := time.Now()
	for w := 0; w < writers; w++ {
		go func(w int) {
			for i := range next {
				t := time.Now()
				l, err := ledger.Open(common, nil)
				if err == nil {
					_, err = l.Append(facts.Simple(&facts.Fact{Kind: facts.KindNote, Tool: fmt.Sprintf("bench:w%d", w),
						Subject: fmt.Sprintf("note %d", i)}))
					l.Close()
				}
				if err != nil {
					errs <- err
					return
				}
				lat[w] = append(lat[w], time.Since(t))
			}
			errs <- nil
		}(w)
	}
	for w := 0; w < writers; w++ {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	wall := time.Since(start)
	b.StopTimer()
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	b.ReportMetric(float64(b.N)/wall.Seconds(), "appends/s")
	b.ReportMetric(float64(all[len(all)*99/100])/1e6, "p99-ms")
}
