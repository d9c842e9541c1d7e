package ledger

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-rally/git-rally/facts"
)

// Tail gives what filtering All gives, after appends and after a merge
// brought facts in from another clone (the mirror stays in order).
func TestTailMatchesAll(t *testing.T) {
	now := t0
	_, cs := network(t, 2, &now)
	for i := 0; i < 40; i++ {
		c := cs[i%2]
		kind := []string{facts.KindNote, facts.KindRisk, facts.KindDecision}[i%3]
		if _, err := c.ledger(t).Append(facts.Simple(&facts.Fact{Kind: kind, Tool: fmt.Sprintf("t%d", i%4), Subject: fmt.Sprintf("s%d", i)})); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Second)
		if i%7 == 0 {
			c.sync(t, true)
		}
	}
	cs[0].sync(t, true)
	cs[1].sync(t, true)
	defer func(c int) { tailChunk = c }(tailChunk)
	tailChunk = 97 // lines straddle chunks
	l := cs[1].ledger(t)
	all, err := l.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, keep := range []func(*facts.Fact) bool{nil, func(f *facts.Fact) bool { return f.Kind == facts.KindRisk }, func(f *facts.Fact) bool { return f.Tool == "t1" }} {
		var want []*facts.Fact
		for _, f := range all {
			if keep == nil || keep(f) {
				want = append(want, f)
			}
		}
		for n := 1; n <= len(want)+2; n++ {
			got, err := cs[1].ledger(t).Tail(n, keep)
			if err != nil {
				t.Fatal(err)
			}
			w := want
			if len(w) > n {
				w = w[len(w)-n:]
			}
			if len(got) != len(w) {
				t.Fatalf("n=%d: %d facts, want %d", n, len(got), len(w))
			}
			for i := range w {
				if got[i].ID != w[i].ID {
					t.Fatalf("n=%d: fact %d is %s, want %s", n, i, got[i].ID, w[i].ID)
				}
			}
		}
	}
}

// mixedLedger appends n facts of several kinds and tools, one kind in
// seven a claim-like kind spread evenly, through Append (so the mirror
// and its index grow as they do in use) after a cold rebuild of the first
// half.
func mixedLedger(t *testing.T, n int) (*Ledger, string) {
	t.Helper()
	dir := gitSandbox(t)
	git(t, dir, "init", "-q", ".")
	common := dir + "/.git"
	now := t0
	clock := func() time.Time { return now }
	l, err := Open(common, clock)
	if err != nil {
		t.Fatal(err)
	}
	l.NoTracking = true
	buildFacts(t, l, n/2, 50, t0) // notes by bench:a, written as objects only
	l.Close()
	for i := n / 2; i < n; i++ {
		now = t0.Add(time.Duration(n+i) * time.Second)
		l, err := Open(common, clock)
		if err != nil {
			t.Fatal(err)
		}
		l.NoTracking = true
		kind := []string{facts.KindNote, facts.KindRisk, facts.KindDecision, facts.KindNote, facts.KindBlocker, facts.KindNote, facts.KindDecision}[i%7]
		if _, err := l.Append(facts.Simple(&facts.Fact{Kind: kind, Tool: fmt.Sprintf("t%d", i%5), Subject: fmt.Sprintf("s%d", i)})); err != nil {
			t.Fatal(err)
		}
		l.Close()
	}
	l, err = Open(common, clock)
	if err != nil {
		t.Fatal(err)
	}
	l.NoTracking = true
	t.Cleanup(func() { l.Close() })
	return l, common
}

// `log -n 10 --kind K`, `--tool T` and `show <id>` read the index: what
// they answer is what filtering every fact answers, and they decode and
// read from the mirror the lines they answer, no other: their cost does
// not grow with the ledger (only the index's 36 bytes a fact are scanned).
func TestIndexReadsDoNotGrow(t *testing.T) {
	for _, n := range []int{200, 1400} {
		l, _ := mixedLedger(t, n)
		all, err := l.All()
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != n {
			t.Fatalf("%d facts, want %d", len(all), n)
		}
		for _, q := range []struct{ kind, tool string }{{"", ""}, {facts.KindBlocker, ""}, {"", "t3"}, {facts.KindRisk, "t2"}, {facts.KindNote, "bench:a"}} {
			var want []*facts.Fact
			for _, f := range all {
				if (q.kind == "" || f.Kind == q.kind) && (q.tool == "" || f.Tool == q.tool) {
					want = append(want, f)
				}
			}
			if len(want) > 10 {
				want = want[len(want)-10:]
			}
			before, read := linesDecoded.Load(), mirrorRead.Load()
			got, err := l.TailOf(10, q.kind, q.tool)
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("log -n 10 --kind %q --tool %q", q.kind, q.tool)
			if d, r := linesDecoded.Load()-before, mirrorRead.Load()-read; d != int64(len(got)) || r != linesLen(got) {
				t.Errorf("n=%d %s: decoded %d lines and read %d bytes of the mirror for %d facts of %d bytes", n, name, d, r, len(got), linesLen(got))
			}
			if len(got) != len(want) {
				t.Fatalf("n=%d %s: %d facts, want %d", n, name, len(got), len(want))
			}
			for i := range want {
				if got[i].ID != want[i].ID {
					t.Fatalf("n=%d %s: fact %d is %s, want %s", n, name, i, got[i].ID, want[i].ID)
				}
			}
			if q.kind == "" && q.tool == "" {
				continue
			}
			// Without -n: every such fact, and only those decoded.
			var every []*facts.Fact
			for _, f := range all {
				if (q.kind == "" || f.Kind == q.kind) && (q.tool == "" || f.Tool == q.tool) {
					every = append(every, f)
				}
			}
			before = linesDecoded.Load()
			got, err = l.TailOf(0, q.kind, q.tool)
			if err != nil || len(got) != len(every) || linesDecoded.Load()-before != int64(len(every)) {
				t.Fatalf("n=%d %s without -n: %d facts (%v) decoding %d, want %d", n, name, len(got), err, linesDecoded.Load()-before, len(every))
			}
			for i := range every {
				if got[i].ID != every[i].ID {
					t.Fatalf("n=%d %s without -n: fact %d is %s, want %s", n, name, i, got[i].ID, every[i].ID)
				}
			}
		}
		for _, f := range []*facts.Fact{all[0], all[n/2], all[n-1]} {
			before, read := linesDecoded.Load(), mirrorRead.Load()
			got, err := l.Find(f.ID[:10])
			if err != nil || got.ID != f.ID {
				t.Fatalf("n=%d: find %s: %v, %v", n, f.ID[:10], got, err)
			}
			if d, r := linesDecoded.Load()-before, mirrorRead.Load()-read; d != 1 || r != int64(len(got.Raw)) {
				t.Errorf("n=%d: show %s decoded %d lines and read %d bytes of the mirror, want 1 and %d", n, f.ID[:10], d, r, len(got.Raw))
			}
		}
		if _, err := l.Find("f_" + strings.Repeat("0", 15) + "x"); err == nil {
			t.Fatalf("a bad id resolves")
		}
	}
}

func linesLen(fs []*facts.Fact) int64 {
	n := 0
	for _, f := range fs {
		n += len(f.Raw)
	}
	return int64(n)
}

// A damaged or missing index is not believed: the readers answer from the
// mirror, the same.
func TestIndexDamagedFallsBack(t *testing.T) {
	l, common := mixedLedger(t, 300)
	want, err := l.TailOf(5, facts.KindRisk, "")
	if err != nil {
		t.Fatal(err)
	}
	idx, _ := filepath.Glob(filepath.Join(common, "rally", "cache", "facts-*.idx"))
	if len(idx) != 1 {
		t.Fatalf("index files %v, want one", idx)
	}
	b, err := os.ReadFile(idx[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, damage := range []func([]byte) []byte{
		func(b []byte) []byte { c := append([]byte(nil), b...); c[len(c)-indexRecord*2+21] ^= 1; return c },
		func(b []byte) []byte { return b[:len(b)-indexRecord] },
		nil,
	} {
		if damage == nil {
			os.Remove(idx[0])
		} else if err := os.WriteFile(idx[0], damage(b), 0o666); err != nil {
			t.Fatal(err)
		}
		l2, err := Open(common, l.Now)
		if err != nil {
			t.Fatal(err)
		}
		l2.NoTracking = true
		got, err := l2.TailOf(5, facts.KindRisk, "")
		if err != nil || len(got) != len(want) {
			t.Fatalf("damaged index: %d facts (%v), want %d", len(got), err, len(want))
		}
		for i := range want {
			if got[i].ID != want[i].ID {
				t.Fatalf("damaged index: fact %d is %s, want %s", i, got[i].ID, want[i].ID)
			}
		}
		if f, err := l2.Find(want[0].ID); err != nil || f.ID != want[0].ID {
			t.Fatalf("damaged index: find: %v %v", f, err)
		}
		l2.Close()
	}
}
