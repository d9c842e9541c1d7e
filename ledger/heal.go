package ledger

import (
	"errors"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// Healing a ledger whose history lost objects. `git prune --expire=now`
// (or gc --prune=now) beside appends can delete the objects of an append
// that was acknowledged: it read the refs before the ref moved. Then the
// ledger's history has a hole that no commit on top can mend (a commit
// whose ancestor is missing stays broken for fsck, push and gc), but every
// acknowledged fact is still in this clone's cache (the mirror of every
// fact at the head). So Heal writes a new commit whose tree holds them
// all: on top of a fetched ledger whose history is whole (its facts keep
// their places; the ones it lacks are added as an append adds them), or as
// a new root. The ref moves to it; no fact is rewritten or dropped, and the
// broken commits are merely no longer the ledger's.

// HealPrefix starts the message of a healing commit: doctor's clock check
// reads its facts as a merge's (their clocks come from the lost history).
const HealPrefix = "heal: "

// HistoryError is a ledger whose history lacks objects in this clone.
type HistoryError struct{ Err error }

func (e *HistoryError) Error() string {
	return "this clone's ledger history is missing objects (a `git prune --expire=now` or `git gc --prune=now` beside rally's appends removes them): " +
		e.Err.Error()
}
func (e *HistoryError) Unwrap() error { return e.Err }

// historyFailure is a heal that failed, as an error naming this clone's
// history (not a remote) and the command that mends it.
func historyFailure(err error) error {
	return &facts.FailedError{Err: &HistoryError{Err: err}, Hint: "git rally doctor --repair"}
}

// HistoryWhole reports whether every object reachable from the ledger's
// head is in the repository, for doctor: what `git rev-list --objects`
// checks (l.whole), which holds every object of the history at once (147
// MB at a million facts, beside doctor's own). Here the head's trees are
// read one at a time and its blobs asked of one cat-file --batch-check,
// then each commit below is read and only what its tree holds that its
// child's does not (a diff, whose trees are read) is checked: what a
// parent shares with a child at a path was checked with the child. It
// holds the commits seen (a history's merges reach a commit twice) and a
// step's trees. It stops at the base an earlier check found whole
// (whole.go): at 100k commits a walk of every one cost doctor most of its
// time.
func (l *Ledger) HistoryWhole() (bool, error) {
	head, err := l.Head()
	if err != nil || head.IsZero() {
		return err == nil, err
	}
	defer l.smallWindows()()
	defer lowGC()()
	or, err := l.Store.NewObjectReader()
	if err != nil {
		return false, err
	}
	defer or.Close()
	ex, err := l.Store.NewExistCheck()
	if err != nil {
		return false, err
	}
	now := l.Now()
	base := l.loadWholeBase()
	whole, met, long := l.historyWhole(head, base, or, ex)
	missing, err := ex.Close()
	if err != nil {
		return false, err
	}
	if long {
		// More commits than historyBudget: read one by one here they
		// cost 39 s of CPU at 200k commits, git's rev-list 6.4 (in
		// pieces: whole.go).
		return l.whole(head), nil
	}
	if !whole || missing > 0 {
		os.Remove(l.wholePath())
		return false, nil
	}
	if !met && !base.IsZero() {
		// Not below the head (a ledger written anew): walked through.
		os.Remove(l.wholePath())
		base = refs.ZeroHash
	}
	l.markWhole(head, base, now)
	return true, nil
}

// historyWhole walks from head down to base (what it reaches was found
// whole before), or to the roots, and says whether it met base; it stops
// (long) after historyBudget commits.
func (l *Ledger) historyWhole(head, base refs.Hash, or *refs.ObjectReader, ex *refs.ExistCheck) (whole, met, long bool) {
	c, err := or.ReadCommit(head)
	if err != nil {
		return false, met, false
	}
	if walkTreeWith(or.ReadTree, c.Tree, func(_ []byte, dir bool, h refs.Hash) {
		if !dir {
			ex.Add(h)
		}
	}) != nil {
		return false, met, false
	}
	type below struct{ commit, childTree refs.Hash }
	todo := []below{}
	for _, p := range c.Parents {
		todo = append(todo, below{p, c.Tree})
	}
	seen := map[refs.Hash]bool{head: true}
	trees := newTreeGens(or.ReadTree)
	// only adds each blob under tree n that is not at its path under o,
	// reading the trees (so they are there).
	add := func(_ string, e refs.Entry, _ bool) error {
		ex.Add(e.Hash)
		return nil
	}
	only := func(o, n refs.Hash) error { return walkDiff(trees.read, "", o, n, add, nil) }
	for len(todo) > 0 {
		b := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if b.commit == base {
			met = true
			continue
		}
		if seen[b.commit] {
			continue
		}
		seen[b.commit] = true
		if historyWalked++; len(seen) > historyBudget {
			return false, met, true
		}
		c, err := or.ReadCommit(b.commit)
		if err != nil {
			return false, met, false
		}
		if only(b.childTree, c.Tree) != nil {
			return false, met, false
		}
		trees.next()
		for _, p := range c.Parents {
			todo = append(todo, below{p, c.Tree})
		}
	}
	return true, met, false
}

// HealResult says what Heal did.
type HealResult struct {
	Healed  bool
	Facts   int       // facts the new commit holds that its parent lacks
	Base    string    // the fetched ledger it was built on, "" for a new root
	Head    refs.Hash // the new head
	OldHead refs.Hash
}

// Heal writes every fact this clone holds into a new commit when the
// ledger's history lacks objects; it does nothing when the history is
// whole.
func (l *Ledger) Heal() (HealResult, error) {
	var res HealResult
	head, err := l.Head()
	if err != nil || head.IsZero() || l.whole(head) {
		return res, err
	}
	// Every fact at the head, from the cache (the tree may be gone).
	prev := l.mergingTracking
	l.mergingTracking = true
	all, err := l.All()
	l.mergingTracking = prev
	if err != nil {
		return res, &HistoryError{Err: fmt.Errorf("and the cache cannot supply the facts: %w", err)}
	}
	// A fetched ledger whose history is whole carries the shared facts
	// where the other clones have them.
	var base refs.Hash
	var baseTree refs.Hash
	have := map[string]bool{}
	for name, h := range trackingRefs(l.Store.CommonDir) {
		if h.IsZero() || !l.whole(h) {
			continue
		}
		c, err := l.Store.ReadCommit(h)
		if err != nil {
			continue
		}
		blobs, err := l.diff(refs.ZeroHash, c.Tree)
		if err != nil && !errors.Is(err, errShrank) {
			continue
		}
		ids := map[string]bool{}
		for _, b := range blobs {
			ids[strings.TrimSuffix(path.Base(b.path), ".json")] = true
		}
		if base.IsZero() || len(ids) > len(have) {
			base, baseTree, have, res.Base = h, c.Tree, ids, name
		}
	}
	var add []*facts.Fact
	for _, f := range all {
		if !have[f.ID] && len(f.Raw) > 0 {
			add = append(add, f)
		}
	}
	lock, err := l.Store.LockRef(LedgerRef)
	if err != nil {
		return res, err
	}
	defer lock.Unlock()
	if lock.Old != head {
		return res, fmt.Errorf("healing the ledger: it moved meanwhile; run it again")
	}
	unlock := l.cache.lock()
	defer unlock()
	now := l.Now().UTC()
	tree := baseTree
	for len(add) > 0 || tree.IsZero() {
		n := min(len(add), segMax)
		if tree, err = l.addFacts(tree, now, add[:n]); err != nil {
			return res, fmt.Errorf("healing the ledger: %w", err)
		}
		res.Facts += n
		add = add[n:]
	}
	var parents []refs.Hash
	if !base.IsZero() {
		parents = []refs.Hash{base}
	}
	msg := fmt.Sprintf("%swrote back %d facts from this clone's cache: objects of the ledger's history at %s were missing\n", HealPrefix, res.Facts, head)
	commit, err := l.commitLocked(lock, refs.Commit{Tree: tree, Parents: parents, Message: msg, When: now}, "ledger healed, but its objects")
	if err != nil {
		return res, err
	}
	l.last = nil
	res.Healed, res.Head, res.OldHead = true, commit, head
	return res, nil
}

// treeGens keeps the trees of a walk's last two steps (a commit and its
// parent share most of theirs): a tree read in the previous step moves to
// this one, anything older is dropped, so a walk over the whole history
// holds two steps' trees, not every tree it read.
type treeGens struct {
	prev, cur map[refs.Hash][]refs.Entry
	readTree  func(refs.Hash) ([]refs.Entry, error)
}

func newTreeGens(readTree func(refs.Hash) ([]refs.Entry, error)) *treeGens {
	return &treeGens{prev: map[refs.Hash][]refs.Entry{}, cur: map[refs.Hash][]refs.Entry{}, readTree: readTree}
}

// read returns tree h's entries, from the last two steps when it was read there.
func (t *treeGens) read(h refs.Hash) ([]refs.Entry, error) {
	if es, ok := t.prev[h]; ok {
		t.cur[h] = es
		return es, nil
	}
	if es, ok := t.cur[h]; ok {
		return es, nil
	}
	es, err := t.readTree(h)
	if err == nil {
		t.cur[h] = es
	}
	return es, err
}

// next starts a step: the previous step's trees not read again are dropped.
func (t *treeGens) next() {
	t.prev, t.cur = t.cur, t.prev
	clear(t.cur)
}
