package ledger

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// buildFacts writes n notes as n/perCommit appends, one second apart, with
// the ledger's own layout code (addFacts, WriteCommit), so the objects are
// exactly those of that many appends. What it skips per append is only
// the ref lock, its fsync and the cache update, which cost a few ms each
// and make no object; the ref is published once at the end.
func buildFacts(tb testing.TB, l *Ledger, n, perCommit int, start time.Time) {
	buildFactsPacking(tb, l, n, perCommit, start, false)
}

// buildFactsPacking is buildFacts; with autopack it packs loose objects
// whenever they pass refs.PackLooseObjects, as appends do in the
// background (refs.Store.MaybePack).
func buildFactsPacking(tb testing.TB, l *Ledger, n, perCommit int, start time.Time, autopack bool) {
	tb.Helper()
	lock, err := l.Store.LockRef(LedgerRef)
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { lock.Unlock() }()
	head := lock.Old
	var tree refs.Hash
	if !head.IsZero() {
		c, err := l.Store.ReadCommit(head)
		if err != nil {
			tb.Fatal(err)
		}
		tree = c.Tree
	}
	clock := int64(0)
	now := start
	for i := 0; i < n; i += perCommit {
		now = now.Add(time.Second)
		var fs []*facts.Fact
		for j := i; j < i+perCommit && j < n; j++ {
			clock++
			f := &facts.Fact{V: 1, Kind: facts.KindNote, Tool: "bench:a", Subject: fmt.Sprintf("note %d", j), At: facts.FormatTime(now), Clock: clock}
			f.Seal()
			fs = append(fs, f)
		}
		if tree, err = l.addFacts(tree, now, fs); err != nil {
			tb.Fatal(err)
		}
		var parents []refs.Hash
		if !head.IsZero() {
			parents = []refs.Hash{head}
		}
		if head, err = l.Store.WriteCommit(refs.Commit{Tree: tree, Parents: parents, Message: message(fs), When: now}); err != nil {
			tb.Fatal(err)
		}
		if autopack && l.Store.LooseEstimate() >= refs.PackLooseObjects {
			// The pack keeps what is reachable: publish the head first.
			if err := lock.Commit(head); err != nil {
				tb.Fatal(err)
			}
			lock.Unlock()
			if err := l.Store.Pack(); err != nil {
				tb.Fatal(err)
			}
			if lock, err = l.Store.LockRef(LedgerRef); err != nil {
				tb.Fatal(err)
			}
		}
	}
	if err := lock.Commit(head); err != nil {
		tb.Fatal(err)
	}
}

// countObjects returns the objects of a repository (loose plus packed).
func countObjects(tb testing.TB, dir string) int {
	tb.Helper()
	total := 0
	for _, line := range strings.Split(git(tb, dir, "count-objects", "-v"), "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if ok && (k == "count" || k == "in-pack") {
			n, _ := strconv.Atoi(v)
			total += n
		}
	}
	return total
}

// BenchmarkSync10k syncs 10,000 new facts from clone a to clone b through
// a local bare remote: a's sync (fetch, nothing to merge, push) then b's
// (fetch, fast-forward, read the new facts, look for contests). Run it
// with -benchtime=1x; it prints the time and the objects transferred.
//
//	go test ./ledger -run '^$' -bench Sync10k -benchtime=1x
//
// Variants: one append per fact (10,000 commits) with a's objects loose;
// autopacked, as appends leave them (rally packs loose objects in the
// background past refs.PackLooseObjects); packed, as after git gc; and
// 100 facts per append (100 commits).
func BenchmarkSync10k(b *testing.B) {
	const n = 10000
	for _, tc := range []struct {
		name      string
		perCommit int
		packed    bool
		autopack  bool
	}{
		{"append-per-fact/loose", 1, false, false},
		{"append-per-fact/autopacked", 1, false, true},
		{"append-per-fact/packed", 1, true, false},
		{"100-facts-per-append/loose", 100, false, false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
			root := gitSandbox(b)
			a := &clone{name: "a", dir: filepath.Join(root, "a"), now: &now}
			git(b, root, "init", "-q", a.dir)
			git(b, a.dir, "config", "gc.auto", "0")
			t0 := time.Now()
			buildFactsPacking(b, a.ledger(b), n, tc.perCommit, now, tc.autopack)
			built := time.Since(t0)
			// Real appends keep the cache at the head; so does this.
			if _, err := a.ledger(b).Read(); err != nil {
				b.Fatal(err)
			}
			if tc.packed {
				git(b, a.dir, "repack", "-adq")
			}
			b.Logf("built %d facts in %d commits, %d objects, in %s", n, (n+tc.perCommit-1)/tc.perCommit, countObjects(b, a.dir), built.Round(time.Millisecond))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				remote := fmt.Sprintf("r%d", i)
				bare := filepath.Join(root, remote+".git")
				git(b, root, "init", "-q", "--bare", bare)
				git(b, bare, "config", "gc.auto", "0")
				git(b, a.dir, "remote", "add", remote, bare)
				bc := &clone{name: "b", dir: filepath.Join(root, fmt.Sprintf("b%d", i)), now: &now}
				git(b, root, "init", "-q", bc.dir)
				git(b, bc.dir, "config", "gc.auto", "0")
				git(b, bc.dir, "remote", "add", remote, bare)
				la, lb := a.ledger(b), bc.ledger(b)
				b.StartTimer()

				t0 := time.Now()
				ra, err := la.Sync(SyncOptions{Remote: remote, Dir: a.dir, Push: true})
				if err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				rb, err := lb.Sync(SyncOptions{Remote: remote, Dir: bc.dir, Push: true})
				if err != nil {
					b.Fatal(err)
				}
				t2 := time.Now()

				b.StopTimer()
				if !ra.Pushed || rb.NewFacts != n || rb.Merge != MergeFastForward {
					b.Fatalf("a: %+v\nb: %+v", ra, rb)
				}
				st, _ := lb.Read()
				if st.Facts != n {
					b.Fatalf("b reads %d facts", st.Facts)
				}
				objs := countObjects(b, bare)
				b.ReportMetric(float64(objs), "objects")
				b.ReportMetric(t1.Sub(t0).Seconds(), "push-s")
				b.ReportMetric(t2.Sub(t1).Seconds(), "fetch-s")
				b.Logf("sync of %d facts: a (push) %s + b (fetch, fast-forward, read) %s = %s; %d objects transferred",
					n, t1.Sub(t0).Round(time.Millisecond), t2.Sub(t1).Round(time.Millisecond), t2.Sub(t0).Round(time.Millisecond), objs)
				os.RemoveAll(bc.dir)
				os.RemoveAll(bare)
				b.StartTimer()
			}
		})
	}
}
