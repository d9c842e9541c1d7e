package ledger

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A check that the history is whole walks, once a head found whole has
// settled (wholeSettle), only what that head does not reach: the count of
// objects git walks stays with the appends since, not the history
// (doctor at 100k commits: 1.8 s of CPU in a walk of every object). A
// hole among the new appends is still found, and so is one anywhere
// once the marks are gone.
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
	walk := func(what string) int {
		t.Helper()
		l := a.ledger(t)
		head, err := l.Head()
		if err != nil {
			t.Fatal(err)
		}
		ok, n := l.wholeWalk(head)
		if !ok {
			t.Fatalf("%s: the history is not whole", what)
		}
		return n
	}
	notes(60)
	all := walk("first")
	if all < 60*3 {
		t.Fatalf("the first check walked %d objects for 60 appends", all)
	}
	notes(2)
	now = now.Add(10 * time.Minute)
	if n := walk("before the first head settled"); n < all {
		t.Errorf("walked %d objects before anything settled, want all (%d or more)", n, all)
	}
	notes(2)
	now = now.Add(wholeSettle)
	walk("settled") // the first check's head is the base from here
	// An append writes 7 objects (a commit, a blob, five trees).
	notes(3)
	if n := walk("after"); n > 7*7 {
		t.Errorf("walked %d objects for 7 appends since the base (the history: %d)", n, all)
	}
	notes(3)
	if n := walk("again"); n > 10*7 {
		t.Errorf("walked %d objects for 10 appends since the base (the history: %d)", n, all)
	}

	// A prune beside the last append: found.
	pruneAppends(t, a, 1)
	l := a.ledger(t)
	head, _ := l.Head()
	if ok, _ := l.wholeWalk(head); ok {
		t.Fatal("a history without its last append's objects is whole")
	}
	if ok, err := l.HistoryWhole(); err != nil || ok {
		t.Fatalf("HistoryWhole after the prune: %v, %v", ok, err)
	}
}

// Marks whose commits are gone (a ledger written anew, its old commits
// pruned) make a check walk everything again rather than fail it.
func TestHistoryWholeMarksGone(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	_, cs := network(t, 1, &now)
	a := cs[0]
	a.note(t, "n")
	l := a.ledger(t)
	gone := "0123456789abcdef0123456789abcdef01234567"
	if err := os.MkdirAll(l.cache.dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(l.cache.dir, "whole"), []byte("base "+gone+"\ncandidate "+gone+" 1\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if ok, err := l.HistoryWhole(); err != nil || !ok {
		t.Fatalf("HistoryWhole with marks of gone commits: %v, %v", ok, err)
	}
	b, _ := os.ReadFile(filepath.Join(l.cache.dir, "whole"))
	if strings.Contains(string(b), gone) {
		t.Errorf("the gone commits are still marked: %s", b)
	}
}
