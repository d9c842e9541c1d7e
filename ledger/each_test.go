package ledger

import (
	"math/rand"
	"os"
	"runtime"
	"testing"

	"github.com/git-rally/git-rally/facts"
)

// Each hands on what All holds, in its order, filtered by kind and tool,
// whether it reads the mirror, its index, or (the cache gone and not
// writable) the ledger itself.
func TestEachIsAll(t *testing.T) {
	_, l, now := rebuildLedger(t)
	genLedger(t, l, rand.New(rand.NewSource(7)), 1200, now)
	all, err := l.All()
	if err != nil {
		t.Fatal(err)
	}
	check := func(what, kind, tool string) {
		t.Helper()
		var want, got []string
		for _, f := range all {
			if (kind == "" || f.Kind == kind) && (tool == "" || f.Tool == tool) {
				want = append(want, f.ID+" "+string(f.Raw))
			}
		}
		if err := l.Each(kind, tool, func(f *facts.Fact) error {
			raw := string(f.Raw)
			if raw[len(raw)-1] != '\n' {
				raw += "\n"
			}
			got = append(got, f.ID+" "+raw)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s Each(%q, %q): %d facts, All %d", what, kind, tool, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s Each(%q, %q): fact %d is %q, All's %q", what, kind, tool, i, got[i], want[i])
			}
		}
	}
	for _, what := range []string{"mirror", "no index"} {
		check(what, "", "")
		check(what, facts.KindClaim, "")
		check(what, "", "b")
		check(what, facts.KindHandoff, "c")
		os.Remove(l.cache.indexPath(l.cache.saved.Gen))
	}
}

// Each holds no fact: what it allocates does not grow with the facts it
// hands on beyond a few bytes each (the mirror's lines are decoded into
// one reused Fact). All decodes and keeps a Fact a line.
func TestEachAllocatesLittlePerFact(t *testing.T) {
	per := func(n int) (float64, float64) {
		_, l, now := rebuildLedger(t)
		genLedger(t, l, rand.New(rand.NewSource(3)), n, now)
		if _, err := l.Read(); err != nil {
			t.Fatal(err)
		}
		var a, b runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&a)
		k := 0
		if err := l.Each("", "", func(*facts.Fact) error { k++; return nil }); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&b)
		if k != n {
			t.Fatalf("Each handed on %d facts of %d", k, n)
		}
		return float64(b.TotalAlloc - a.TotalAlloc), float64(b.Mallocs - a.Mallocs)
	}
	b1, m1 := per(1000)
	b2, m2 := per(4000)
	bytesPer, mallocsPer := (b2-b1)/3000, (m2-m1)/3000
	t.Logf("Each: %.1f bytes and %.2f allocations a fact", bytesPer, mallocsPer)
	if bytesPer > 64 || mallocsPer > 1 {
		t.Fatalf("Each allocates %.1f bytes (%.2f allocations) a fact, want at most 64 (1)", bytesPer, mallocsPer)
	}
}

// After returns what All holds after a key, decoding only those lines
// and the one it stops at.
func TestAfterReadsTheFactsAfter(t *testing.T) {
	_, l, now := rebuildLedger(t)
	genLedger(t, l, rand.New(rand.NewSource(9)), 1500, now)
	all, err := l.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, back := range []int{1, 7, 300} {
		k := all[len(all)-back].Key()
		linesDecoded.Store(0)
		got, err := l.After(k)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != back-1 {
			t.Fatalf("After the %dth last fact: %d facts, want %d", back, len(got), back-1)
		}
		for i, f := range got {
			if w := all[len(all)-back+1+i]; f.ID != w.ID || string(f.Raw) != string(w.Raw) {
				t.Fatalf("After: fact %d is %s, want %s", i, f.ID, w.ID)
			}
		}
		if d := linesDecoded.Load(); d > int64(back) {
			t.Fatalf("After the %dth last fact decoded %d lines, want at most %d", back, d, back)
		}
	}
}
