package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// writeFacts commits fs on top of the ledger (tree, head), in one commit
// dated when, and moves the ref there.
func writeFacts(t *testing.T, l *Ledger, tree, head refs.Hash, when time.Time, fs []*facts.Fact) (refs.Hash, refs.Hash) {
	t.Helper()
	var err error
	if tree, err = l.addFacts(tree, when, fs); err != nil {
		t.Fatal(err)
	}
	var parents []refs.Hash
	if !head.IsZero() {
		parents = []refs.Hash{head}
	}
	if head, err = l.Store.WriteCommit(refs.Commit{Tree: tree, Parents: parents, Message: "gen\n", When: when}); err != nil {
		t.Fatal(err)
	}
	lock, err := l.Store.LockRef(LedgerRef)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()
	if err := lock.Commit(head); err != nil {
		t.Fatal(err)
	}
	return tree, head
}

// skewedLedger writes n facts of a room (claims and releases, handoffs
// and answers, retractions, notes, risks) over past days, then a tail in
// which a writer whose clock runs 6 to 60 minutes ahead (facts dated in
// the future) and writers on time take turns, clocks increasing.
func skewedLedger(t *testing.T, l *Ledger, rng *rand.Rand, n int, now time.Time) (refs.Hash, refs.Hash) {
	t.Helper()
	tools := []string{"a", "b", "c", "d"}
	var all []*facts.Fact
	var tree, head refs.Hash
	clock := int64(0)
	mk := func(f facts.Fact, at time.Time) *facts.Fact {
		clock++
		f.V, f.Clock, f.At = 1, clock, facts.FormatTime(at)
		f.Seal()
		all = append(all, &f)
		return &f
	}
	random := func(tool string, at time.Time) *facts.Fact {
		switch rng.Intn(8) {
		case 0, 1:
			return mk(facts.Fact{Kind: facts.KindClaim, Tool: tool, Scopes: []string{fmt.Sprintf("file:f%d", rng.Intn(12))}, LeaseS: 1800, Access: facts.Exclusive}, at)
		case 2:
			return mk(facts.Fact{Kind: facts.KindRelease, Tool: tool, Ref: pick(rng, all, facts.KindClaim)}, at)
		case 3:
			return mk(facts.Fact{Kind: facts.KindHandoff, Tool: tool, Target: tools[rng.Intn(len(tools))], Subject: "h"}, at)
		case 4:
			return mk(facts.Fact{Kind: []string{facts.KindReceipt, facts.KindResolve}[rng.Intn(2)], Tool: tool, Ref: pick(rng, all, facts.KindHandoff)}, at)
		case 5:
			ref := pick(rng, all, "")
			return mk(facts.Fact{Kind: facts.KindRetract, Tool: authorOf(all, ref), Ref: ref}, at)
		case 6:
			return mk(facts.Fact{Kind: facts.KindRisk, Tool: tool, Subject: "r"}, at)
		}
		return mk(facts.Fact{Kind: facts.KindNote, Tool: tool, Subject: "n"}, at)
	}
	when := now.Add(-time.Duration(n) * time.Minute)
	for len(all) < n {
		var batch []*facts.Fact
		for j := 0; j < 100 && len(all) < n; j++ {
			when = when.Add(time.Minute / 2)
			batch = append(batch, random(tools[rng.Intn(len(tools))], when))
		}
		tree, head = writeFacts(t, l, tree, head, when, batch)
	}
	for i := 0; i < 40; i++ {
		at := now.Add(-time.Minute)
		tool := tools[rng.Intn(3)]
		if i%2 == 0 {
			at, tool = now.Add(time.Duration(6+rng.Intn(55))*time.Minute), "d"
		}
		tree, head = writeFacts(t, l, tree, head, now, []*facts.Fact{random(tool, at)})
	}
	return tree, head
}

// stateKey is what a projection holds, handoffs too, as one string.
func stateKey(t *testing.T, st *facts.State) string {
	t.Helper()
	b, err := json.Marshal(struct {
		S *facts.State
		H map[string]*facts.Handoff
	}{st, st.Handoffs()})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A read after facts held back as future-dated came due replays the
// mirror after the checkpoint (the facts since the first one held back),
// not the ledger's history: the bytes of mirror it reads are the same for
// a ledger twice as long. Each step's projection is exactly the one built
// at once from every fact.
func TestDueFactReadsTailNotHistory(t *testing.T) {
	// A rebuild keeps a checkpoint every so many facts, 4096 at scale; as
	// many here as the ledgers are short.
	defer func(n int) { checkpointEvery = n }(checkpointEvery)
	checkpointEvery = 64
	perRead := map[int]int64{}
	for _, n := range []int{1500, 3000} {
		common, l, now := rebuildLedger(t)
		tree, _ := skewedLedger(t, l, rand.New(rand.NewSource(7)), n, now)
		open := func() *Ledger {
			l, err := Open(common, func() time.Time { return now })
			if err != nil {
				t.Fatal(err)
			}
			l.NoTracking = true
			t.Cleanup(func() { l.Close() })
			return l
		}
		st, err := open().Read() // cold: builds the cache and the checkpoint
		if err != nil {
			t.Fatal(err)
		}
		if st.Held == 0 {
			t.Fatal("no fact is held back: the test needs some")
		}
		mirror, err := os.Stat(filepath.Join(common, "rally", "cache", fmt.Sprintf("facts-%d.jsonl", open().cache.loadGen())))
		if err != nil {
			t.Fatal(err)
		}
		replays := CheckpointReplays.Load()
		var worst int64
		for step := 0; st.Held > 0; step++ {
			if step > 15 {
				t.Fatalf("%d facts still held back", st.Held)
			}
			now = now.Add(4 * time.Minute)
			held := st.Held
			before := mirrorRead.Load()
			if st, err = open().Read(); err != nil {
				t.Fatal(err)
			}
			worst = max(worst, mirrorRead.Load()-before)
			t.Logf("n=%d step %d: %d held, %d bytes read", n, step, held, mirrorRead.Load()-before)
			want, _, _ := oldRebuild(t, common, now, tree)
			want.Head, want.Tree = st.Head, st.Tree
			if got, w := stateKey(t, st), stateKey(t, want); got != w {
				t.Fatalf("n=%d step %d (%d held before, %d now): replayed projection differs:\n got %s\nwant %s", n, step, held, st.Held, got, w)
			}
		}
		if CheckpointReplays.Load() == replays {
			t.Fatalf("n=%d: no read replayed from the checkpoint", n)
		}
		if worst*4 > mirror.Size() {
			t.Fatalf("n=%d: a read of due facts read %d bytes of a %d-byte mirror", n, worst, mirror.Size())
		}
		perRead[n] = worst
	}
	if perRead[3000] > perRead[1500]*11/10 {
		t.Fatalf("mirror bytes read by a read of due facts grew with the ledger: %d at 1500 facts, %d at 3000", perRead[1500], perRead[3000])
	}
}

// A merge whose facts sort among the newest ones (a teammate's appends
// fetched) is projected from the checkpoint: the lines before it are
// copied into the new mirror generation as they are, only the lines
// after it and the new facts are decoded (mirror bytes read), as many at
// 1,500 facts as at 3,000; the projection, the mirror and its index are what a rebuild
// makes.
func TestMergeDecodesTailNotHistory(t *testing.T) {
	defer func(n int) { checkpointEvery = n }(checkpointEvery)
	checkpointEvery = 64
	perMerge := map[int]int64{}
	for _, n := range []int{1500, 3000} {
		common, l, now := rebuildLedger(t)
		tree, head := skewedLedger(t, l, rand.New(rand.NewSource(9)), n, now)
		now = now.Add(2 * time.Hour) // nothing held back
		read := func() *facts.State {
			t.Helper()
			l, err := Open(common, func() time.Time { return now })
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			l.NoTracking = true
			st, err := l.Read()
			if err != nil {
				t.Fatal(err)
			}
			return st
		}
		st := read()
		note := func(clock int64, i int) *facts.Fact {
			f := &facts.Fact{V: 1, Kind: facts.KindNote, Tool: "e", Subject: fmt.Sprintf("n%d", i), Clock: clock, At: facts.FormatTime(now.Add(-time.Minute))}
			f.Seal()
			return f
		}
		for b := 0; b < 3; b++ { // appends read one by one: checkpoints on the way
			var fs []*facts.Fact
			for i := 0; i < 40; i++ {
				fs = append(fs, note(st.MaxClock+1+int64(i), b*40+i))
			}
			tree, head = writeFacts(t, l, tree, head, now, fs)
			st = read()
		}
		// Facts that sort among the last 40: a merge.
		var fs []*facts.Fact
		for i := 0; i < 20; i++ {
			fs = append(fs, note(st.MaxClock-30+int64(i), 1000+i))
		}
		tree, _ = writeFacts(t, l, tree, head, now, fs)
		merges, read0 := CheckpointMerges.Load(), mirrorRead.Load()
		st = read()
		perMerge[n] = mirrorRead.Load() - read0
		if CheckpointMerges.Load() != merges+1 {
			t.Errorf("n=%d: the merge was not projected from the checkpoint", n)
		}
		want, all, _ := oldRebuild(t, common, now, tree)
		want.Head, want.Tree = st.Head, st.Tree
		if got, w := stateKey(t, st), stateKey(t, want); got != w {
			t.Fatalf("n=%d: merged projection differs:\n got %s\nwant %s", n, got, w)
		}
		l2, err := Open(common, func() time.Time { return now })
		if err != nil {
			t.Fatal(err)
		}
		l2.NoTracking = true
		st2, err := l2.Read()
		if err != nil {
			t.Fatal(err)
		}
		var mirror []byte
		for _, f := range sortedCopy(all) {
			mirror = append(mirror, f.Raw...)
		}
		if got, ok := l2.cache.mirrorBytes(st2); !ok || !bytes.Equal(got, mirror) {
			t.Fatalf("n=%d: mirror differs (%v): %d bytes, want %d", n, ok, len(got), len(mirror))
		}
		sorted := sortedCopy(all)
		got, ok := l2.cache.indexTail(st2, 5, "", "")
		if !ok || len(got) != 5 {
			t.Fatalf("n=%d: the index gives %d facts (%v)", n, len(got), ok)
		}
		for i := range got {
			if w := sorted[len(sorted)-5+i]; got[i].ID != w.ID {
				t.Fatalf("n=%d: fact %d from the index is %s, want %s", n, i, got[i].ID, w.ID)
			}
		}
		if f, err := l2.Find(sorted[3].ID); err != nil || f.ID != sorted[3].ID {
			t.Fatalf("n=%d: show of an old fact: %v %v", n, f, err)
		}
		l2.Close()
	}
	if perMerge[3000] > perMerge[1500]*11/10 {
		t.Fatalf("mirror bytes decoded by a merge grew with the ledger: %d at 1500 facts, %d at 3000", perMerge[1500], perMerge[3000])
	}
}

// A stream of future-dated facts (a clock running ahead, or a remote
// sending them on purpose) is counted and held back, but what the cache
// keeps of it, and what a read looks at to see whether one came due, does
// not grow with it: state.bin holds their number and the earliest time,
// not every held fact.
func TestHeldFactsDoNotGrowTheState(t *testing.T) {
	size := map[int]int64{}
	for _, n := range []int{100, 2000} {
		common, l, now := rebuildLedger(t)
		var batch []*facts.Fact
		for i := 0; i < n; i++ {
			f := facts.Fact{V: 1, Kind: facts.KindNote, Tool: "ahead", Subject: "n", Clock: int64(i + 1),
				At: facts.FormatTime(now.Add(time.Duration(24*365+i) * time.Hour))}
			f.Seal()
			batch = append(batch, &f)
		}
		writeFacts(t, l, refs.Hash{}, refs.Hash{}, now, batch)
		st, err := l.Read()
		if err != nil {
			t.Fatal(err)
		}
		if st.Held != n {
			t.Fatalf("%d facts held back, want %d", st.Held, n)
		}
		if st.FutureDue(now.Add(facts.FutureSkew)) {
			t.Fatal("a fact a year ahead is due now")
		}
		if !st.FutureDue(now.Add(24*365*time.Hour + time.Minute)) {
			t.Fatal("the earliest held fact is not due a year later")
		}
		fi, err := os.Stat(filepath.Join(common, "rally", "cache", stateFile))
		if err != nil {
			t.Fatal(err)
		}
		size[n] = fi.Size()
	}
	if size[2000] > size[100]+64 {
		t.Fatalf("state.bin grew with the facts held back: %d bytes with 100, %d with 2000", size[100], size[2000])
	}
}
