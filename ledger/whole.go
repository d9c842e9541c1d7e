package ledger

import (
	"fmt"
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
// and deletes the append's objects after: it may do so after a check
// that found them. So a head found whole is a candidate, and becomes the
// confirmed base only when a later check, at least wholeSettle after,
// finds it whole again (it walks the candidate as well as the head); from
// then on a check walks only what the confirmed base does not reach
// (`git rev-list --objects <head> <candidate> --not <base>`). A check
// that fails, or whose base or candidate is gone, walks everything and
// starts again. The marks are this clone's own (rally/cache/whole),
// never fetched; losing them costs one whole walk.

// wholeSettle is how long a prune that read the refs before an append
// may run on: a head found whole is trusted that long after.
const wholeSettle = time.Hour

// wholeMarks is what earlier checks found whole.
type wholeMarks struct {
	base      refs.Hash // confirmed
	candidate refs.Hash // found whole at candidateAt
	at        time.Time
}

func (l *Ledger) wholePath() string { return filepath.Join(l.cache.dir, "whole") }

func (l *Ledger) loadWhole() wholeMarks {
	var m wholeMarks
	b, err := os.ReadFile(l.wholePath())
	if err != nil {
		return m
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "base":
			m.base, _ = refs.ParseHash(f[1])
		case len(f) == 3 && f[0] == "candidate":
			h, err1 := refs.ParseHash(f[1])
			sec, err2 := strconv.ParseInt(f[2], 10, 64)
			if err1 == nil && err2 == nil {
				m.candidate, m.at = h, time.Unix(sec, 0)
			}
		}
	}
	return m
}

func (l *Ledger) saveWhole(m wholeMarks) {
	var b strings.Builder
	if !m.base.IsZero() {
		fmt.Fprintf(&b, "base %s\n", m.base)
	}
	if !m.candidate.IsZero() {
		fmt.Fprintf(&b, "candidate %s %d\n", m.candidate, m.at.Unix())
	}
	if os.MkdirAll(l.cache.dir, 0o777) != nil {
		return
	}
	tmp := l.wholePath() + ".tmp"
	if os.WriteFile(tmp, []byte(b.String()), 0o666) == nil {
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
	m := l.loadWhole()
	tips := []refs.Hash{h}
	if !m.candidate.IsZero() && m.candidate != h {
		tips = append(tips, m.candidate)
	}
	ok, n := l.walkObjects(tips, m.base)
	if !ok && (!m.base.IsZero() || len(tips) > 1) {
		// A base or candidate gone (a rewritten ledger, its old
		// commits pruned), or a hole: everything, from nothing.
		m = wholeMarks{}
		ok, n = l.walkObjects([]refs.Hash{h}, refs.ZeroHash)
	}
	if !ok {
		l.saveWhole(wholeMarks{})
		return false, n
	}
	switch {
	case m.candidate.IsZero():
		m.candidate, m.at = h, now
	case !now.Before(m.at.Add(wholeSettle)):
		// Found whole again, after any prune that could have taken
		// its objects: it is the base from now on.
		m.base, m.candidate, m.at = m.candidate, h, now
	}
	l.saveWhole(m)
	return true, n
}

// walkObjects walks every object reachable from tips and not from not
// (in pack windows: a million facts in one commit cost 289 MB of RSS in
// git's default windows, 143 MB in these) and reports whether all are
// present, and how many it walked.
func (l *Ledger) walkObjects(tips []refs.Hash, not refs.Hash) (bool, int) {
	args := append(refs.PackWindows(), "rev-list", "--objects", "--count")
	for _, t := range tips {
		args = append(args, t.String())
	}
	if !not.IsZero() {
		args = append(args, "^"+not.String())
	}
	out, err := refs.Git(l.Store.CommonDir, nil, args...)
	if err != nil {
		return false, 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(out))
	return true, n
}
