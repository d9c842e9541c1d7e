package ledger

import (
	"errors"
	"fmt"
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
// head is in the repository (git rev-list --objects, from what an earlier
// check found whole: whole.go).
func (l *Ledger) HistoryWhole() (bool, error) {
	head, err := l.Head()
	if err != nil || head.IsZero() {
		return err == nil, err
	}
	return l.whole(head), nil
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
	commit, err := l.Store.WriteCommit(refs.Commit{Tree: tree, Parents: parents, Message: msg, When: now})
	if err != nil {
		return res, err
	}
	if err := lock.Commit(commit); err != nil {
		return res, err
	}
	lock.Unlock()
	if err := l.Store.Ensure(); err != nil {
		return res, fmt.Errorf("ledger healed, but its objects could not be checked: %w", err)
	}
	l.last = nil
	res.Healed, res.Head, res.OldHead = true, commit, head
	return res, nil
}
