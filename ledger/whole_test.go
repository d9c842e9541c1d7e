package ledger

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A check that the history is whole walks, after a first one, only what
// the commit it marked (the newest an hour old, wholeSettle) does not
// reach: the count of objects git walks stays with the recent appends,
// not the history (doctor at 100k commits: 1.8 s of CPU in a walk of
// every object). Appends the check found whole but a prune that read the
// refs before them may still take are walked again, and a hole there is
// found.
func TestHistoryWholeWalksOnlyWhatIsNew(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	_, cs := network(t, 1, &now)
	a := cs[0]
	notes := func(n int) {
		for i := 0; i < n; i++ {
			a.note(t, "n")
			now = now.Add(time.Second)
		}
	}
	walk := func(what string) (bool, int) {
		t.Helper()
		l := a.ledger(t)
		head, err := l.Head()
		if err != nil {
			t.Fatal(err)
		}
		return l.wholeWalk(head)
	}
	notes(60)
	now = now.Add(2 * wholeSettle)
	notes(3)
	ok, all := walk("first")
	if !ok || all < 63*7 {
		t.Fatalf("the first check: whole %v, walked %d objects for 63 appends", ok, all)
	}
	// An append writes 7 objects (a commit, a blob, five trees).
	notes(4)
	if ok, n := walk("second"); !ok || n > 7*7 {
		t.Errorf("the second check: whole %v, walked %d objects for the 7 appends of the last hour (the history: %d)", ok, n, all)
	}
	// The 3 appends the first check found whole are younger than an
	// hour: a prune may still take them, and the next check sees it.
	pruneAppends(t, a, 7)
	if ok, n := walk("after a prune"); ok {
		t.Fatalf("a history without its last 7 appends' objects is whole (walked %d)", n)
	}
	if ok, err := a.ledger(t).HistoryWhole(); err != nil || ok {
		t.Fatalf("HistoryWhole after the prune: %v, %v", ok, err)
	}
}

// A base that is gone (a ledger written anew, its old commits pruned)
// makes a check walk everything again rather than fail.
func TestHistoryWholeBaseGone(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	_, cs := network(t, 1, &now)
	a := cs[0]
	a.note(t, "n")
	l := a.ledger(t)
	if err := os.MkdirAll(l.cache.dir, 0o777); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(l.cache.dir, "whole")
	if err := os.WriteFile(p, []byte("base 0123456789abcdef0123456789abcdef01234567\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if ok, err := l.HistoryWhole(); err != nil || !ok {
		t.Fatalf("HistoryWhole with a base that is gone: %v, %v", ok, err)
	}
	if _, err := os.Stat(p); err == nil {
		t.Errorf("the gone base is still marked")
	}
}

// A walk of everything (a first check) goes piece by piece (wholePiece
// commits each): the pieces cover the history, and no git process holds
// more than about a piece's objects.
func TestHistoryWholeInPieces(t *testing.T) {
	defer func(n, m int) { wholePiece, wholePieces = n, m }(wholePiece, wholePieces)
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	_, cs := network(t, 2, &now)
	a, b := cs[0], cs[1]
	for i := 0; i < 30; i++ {
		a.note(t, "a")
		if i%10 == 0 {
			a.sync(t, true)
			b.note(t, "b")
			b.sync(t, true) // merges on b's side
			a.sync(t, true)
		}
	}
	l := a.ledger(t)
	head, err := l.Head()
	if err != nil {
		t.Fatal(err)
	}
	wholePiece, wholeWalked = 1<<14, 0
	ok, all := l.walkPieces(head)
	if !ok || wholeWalked != all {
		t.Fatalf("one piece: whole %v, walked %d, the most at once %d", ok, all, wholeWalked)
	}
	wholePiece, wholePieces, wholeWalked = 4, 100, 0
	ok, n := l.walkPieces(head)
	if !ok || n < all {
		t.Errorf("in pieces of 4 commits: whole %v, walked %d objects, want %d or more", ok, n, all)
	}
	if wholeWalked > 4*7*2 {
		t.Errorf("a piece of 4 commits walked %d objects (the history: %d)", wholeWalked, all)
	}
	wholePieces, wholeWalked = 2, 0
	if ok, n := l.walkPieces(head); !ok || n < all || wholeWalked < all/3 {
		t.Errorf("in 2 pieces: whole %v, walked %d objects, at most %d at once (the history: %d)", ok, n, wholeWalked, all)
	}
	pruneAppends(t, a, 1)
	if ok, _ := l.walkPieces(head); ok {
		t.Error("in pieces, a history without its last append's objects is whole")
	}
}

// Doctor's HistoryWhole (an in-process walk of each commit's difference
// from its child) stops at the base too: the commits it reads are those
// of the last hour, not the history.
func TestHistoryWholeDoctorStopsAtBase(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	_, cs := network(t, 1, &now)
	a := cs[0]
	for i := 0; i < 40; i++ {
		a.note(t, "n")
		now = now.Add(time.Second)
	}
	now = now.Add(2 * wholeSettle)
	a.note(t, "n")
	historyWalked = 0
	if ok, err := a.ledger(t).HistoryWhole(); err != nil || !ok || historyWalked < 40 {
		t.Fatalf("the first check: %v %v, read %d commits", ok, err, historyWalked)
	}
	for i := 0; i < 3; i++ {
		a.note(t, "n")
	}
	historyWalked = 0
	if ok, err := a.ledger(t).HistoryWhole(); err != nil || !ok || historyWalked > 4 {
		t.Errorf("the second check: %v %v, read %d commits for the 4 appends of the last hour", ok, err, historyWalked)
	}
	pruneAppends(t, a, 4)
	if ok, _ := a.ledger(t).HistoryWhole(); ok {
		t.Error("whole without the last hour's appends")
	}
}

// Beyond historyBudget commits, doctor's walk leaves it to git's
// rev-list (in pieces): it reads no more than the budget in-process, and
// still finds a hole.
func TestHistoryWholeDoctorBudget(t *testing.T) {
	defer func(n int) { historyBudget = n }(historyBudget)
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	_, cs := network(t, 1, &now)
	a := cs[0]
	for i := 0; i < 30; i++ {
		a.note(t, "n")
	}
	historyBudget, historyWalked, wholeWalked = 5, 0, 0
	if ok, err := a.ledger(t).HistoryWhole(); err != nil || !ok || historyWalked > 6 || wholeWalked < 30*7 {
		t.Fatalf("whole %v %v, read %d commits in-process, git walked %d objects", ok, err, historyWalked, wholeWalked)
	}
	pruneAppends(t, a, 1)
	if ok, _ := a.ledger(t).HistoryWhole(); ok {
		t.Error("whole without the last append")
	}
}
