package ledger

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/git-rally/git-rally/refs"
)

// Whether a ledger's history is whole (every object reachable from a
// commit present), without walking the whole history each time. A walk
// of every object (git rev-list --objects) grows with the commits, five
// trees and a blob an append: at 100k commits 1.8 s of CPU and 152 MB,
// most of doctor's time, and sync paid it on every failed fetch.
//
// What a check found whole stays whole: objects reachable from a ref are
// never pruned. The one way rally loses them is a prune (or a
// `gc --prune=now`) that read the refs before an append moved the ledger
// and deletes the append's objects after, maybe after a check found them.
// So a check that found the history whole marks as its base the newest
// commit on the head's first-parent line dated wholeSettle or more before
// it (rally dates a commit it writes when it writes it, by the clock the
// check reads; a fetched commit came in a pack git keeps until its ref
// is written), and the next check walks only what the base does not reach
// (`git rev-list --objects <head> --not <base>`). A check that fails, or
// whose base is gone, walks everything. The base is this clone's own
// (rally/cache/whole), never fetched; losing it costs one whole walk.

// wholeSettle is how long a prune that read the refs before an append
// may run on: a commit that old that a check found whole stays whole.
const wholeSettle = time.Hour

// settleWalk is how many first-parent commits a check reads back from
// the head for its new base (an hour of appends): beyond, the old one
// stays.
const settleWalk = 4096

func (l *Ledger) wholePath() string { return filepath.Join(l.cache.dir, "whole") }

func (l *Ledger) loadWholeBase() refs.Hash {
	b, err := os.ReadFile(l.wholePath())
	if err != nil {
		return refs.ZeroHash
	}
	f := strings.Fields(string(b))
	if len(f) != 2 || f[0] != "base" {
		return refs.ZeroHash
	}
	h, _ := refs.ParseHash(f[1])
	return h
}

func (l *Ledger) saveWholeBase(h refs.Hash) {
	if os.MkdirAll(l.cache.dir, 0o777) != nil {
		return
	}
	tmp := l.wholePath() + ".tmp"
	if os.WriteFile(tmp, []byte(fmt.Sprintf("base %s\n", h)), 0o666) == nil {
		os.Rename(tmp, l.wholePath())
	}
}

// whole reports whether every object reachable from h is present.
func (l *Ledger) whole(h refs.Hash) bool {
	ok, _ := l.wholeWalk(h)
	return ok
}

// wholeWalk is whole and the number of objects it walked.
func (l *Ledger) wholeWalk(h refs.Hash) (bool, int) {
	now := l.Now()
	loaded := l.loadWholeBase()
	base := loaded
	var ok bool
	var n int
	if !base.IsZero() {
		ok, n = l.walkObjects(h, base)
	}
	if !ok {
		// No base, the base gone (a ledger written anew, its old
		// commits pruned), or a hole: everything.
		base = refs.ZeroHash
		ok, n = l.walkPieces(h)
	}
	if !ok {
		os.Remove(l.wholePath())
		return false, n
	}
	if base != loaded {
		os.Remove(l.wholePath())
	}
	l.markWhole(h, base, now)
	return true, n
}

// markWhole records the base a check that found h whole (from base)
// leaves.
func (l *Ledger) markWhole(h, base refs.Hash, now time.Time) {
	if nb := l.settledBase(h, base, now); nb != base {
		l.saveWholeBase(nb)
	}
}

// settledBase is the newest commit on h's first-parent line dated
// wholeSettle before now, within settleWalk commits and above base;
// else base.
func (l *Ledger) settledBase(h, base refs.Hash, now time.Time) refs.Hash {
	for i := 0; i < settleWalk && !h.IsZero() && h != base; i++ {
		c, err := l.Store.ReadCommit(h)
		if err != nil {
			return base
		}
		if !c.When.After(now.Add(-wholeSettle)) {
			return h
		}
		if len(c.Parents) == 0 {
			break
		}
		h = c.Parents[0]
	}
	return base
}

// wholePiece is how many commits a walk of everything takes at a time:
// git holds an object struct for every object it walks (a walk of 200k
// commits' 1.4M objects peaked at 207 MB). The bounds are every
// wholePiece-th commit reachable from the head in topological order (a
// line of history not intermixed with another), the head the first:
// each piece is what a bound reaches and the bound before it
// (older) does not, and the pieces cover the history (an object the head
// reaches is in the piece of the oldest bound that reaches it; on a
// first-parent line they partition it). wholeWalked, for tests, is the
// most objects one piece walked. A piece marks the objects of the tree
// of the bound before it (what it does not walk), a fact each: at most
// wholePieces pieces (at 200k commits 13 pieces cost 2.5 s of CPU more
// than one walk).
var (
	wholePiece  = 1 << 14
	wholePieces = 8
	wholeWalked int
	// historyWalked counts the commits HistoryWhole read, for tests.
	historyWalked int
	// historyBudget is how many commits HistoryWhole reads in-process
	// (an in-process walk holds less than git's, but at 200k commits
	// cost 39 s of CPU against rev-list's 6.4) before it asks git.
	historyBudget = 1 << 14
)

// walkPieces walks everything reachable from h, piece by piece.
func (l *Ledger) walkPieces(h refs.Hash) (bool, int) {
	var bounds []refs.Hash // newest first
	k := 0
	read := func(r io.Reader) error {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if k%wholePiece == 0 {
				b, err := refs.ParseHash(sc.Text())
				if err != nil {
					return err
				}
				bounds = append(bounds, b)
			}
			k++
		}
		return sc.Err()
	}
	if err := refs.GitStream(l.Store.CommonDir, nil, nil, read, append(refs.PackWindows(), "rev-list", "--topo-order", h.String())...); err != nil {
		return false, 0
	}
	if step := (len(bounds) + wholePieces - 1) / wholePieces; step > 1 {
		// Each piece also marks the tree of the bound before it (a
		// struct for each fact of it): at most wholePieces of them.
		kept := bounds[:0]
		for i := 0; i < len(bounds); i += step {
			kept = append(kept, bounds[i])
		}
		bounds = kept
	}
	total := 0
	prev := refs.ZeroHash
	for i := len(bounds) - 1; i >= 0; i-- {
		ok, n := l.walkObjects(bounds[i], prev)
		total += n
		if !ok {
			return false, total
		}
		prev = bounds[i]
	}
	return true, total
}

// walkObjects walks every object reachable from h and not from not (in
// pack windows: a million facts in one commit cost 289 MB of RSS in git's
// default windows, 143 MB in these) and reports whether all are present,
// and how many it walked.
func (l *Ledger) walkObjects(h, not refs.Hash) (bool, int) {
	args := append(refs.PackWindows(), "rev-list", "--objects", "--count", h.String())
	if !not.IsZero() {
		args = append(args, "^"+not.String())
	}
	out, err := refs.Git(l.Store.CommonDir, nil, args...)
	if err != nil {
		return false, 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(out))
	wholeWalked = max(wholeWalked, n)
	return true, n
}
