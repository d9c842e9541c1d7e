package ledger

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// Problem is an integrity finding of doctor.
type Problem struct {
	Code, Message, Path string
}

// Doctor checks the ledger at its head: every line parses and carries the
// id of its content, no id repeats, clocks grow along the first-parent
// history (up to maxCommits), objects are present, the format is known,
// and no ref lock file is left over.
func (l *Ledger) Doctor(maxCommits int) ([]Problem, error) {
	var ps []Problem
	if p, mod, ok := l.Store.RefLockFile(LedgerRef); ok {
		ps = append(ps, Problem{Code: "lock-file", Path: p,
			Message: fmt.Sprintf("%s exists (modified %s): a git process is updating the ledger, or one was killed while it did; the next append removes it only if a killed rally left it; otherwise remove it when no git process is running", p, facts.FormatTime(mod))})
	}
	for _, p := range l.Store.TrackingLocks() {
		ref := strings.TrimSuffix(filepath.ToSlash(p[len(l.Store.CommonDir)+1:]), ".lock")
		ps = append(ps, Problem{Code: "lock-file", Path: p,
			Message: fmt.Sprintf("%s exists: a `git fetch` is updating %s in this clone, or one was killed while it did, and every fetch of the ledger fails until it goes; if no git process is running: rm %s", p, ref, p)})
	}
	head, err := l.Head()
	if err != nil {
		return append(ps, Problem{Code: "bad-ref", Message: err.Error()}), nil
	}
	if head.IsZero() {
		return ps, nil
	}
	c, err := l.Store.ReadCommit(head)
	if err != nil {
		return append(ps, Problem{Code: "missing-object", Message: err.Error()}), nil
	}
	root, err := l.Store.ReadTree(c.Tree)
	if err != nil {
		return append(ps, Problem{Code: "missing-object", Message: err.Error()}), nil
	}
	format := false
	for _, e := range root {
		if e.Name == FormatFile && !e.Dir {
			format = true
			b, err := l.Store.ReadBlob(e.Hash)
			switch {
			case err != nil:
				ps = append(ps, Problem{Code: "missing-object", Path: FormatFile, Message: err.Error()})
			case string(b) != FormatContent:
				ps = append(ps, Problem{Code: "format", Message: fmt.Sprintf("unknown ledger format %q", strings.TrimSpace(string(b)))})
			}
		}
	}
	if !format {
		ps = append(ps, Problem{Code: "format", Message: "no format marker at the ledger root"})
	}
	blobs, err := l.diff(refHashZero, c.Tree)
	if err != nil {
		return append(ps, Problem{Code: "missing-object", Message: err.Error()}), nil
	}
	seen := map[string]string{}
	for _, b := range blobs {
		data, err := l.Store.ReadBlob(b.hash)
		if errors.Is(err, refs.ErrTooLarge) {
			ps = append(ps, Problem{Code: "oversize", Path: b.path, Message: err.Error()})
			continue
		}
		if err != nil {
			ps = append(ps, Problem{Code: "missing-object", Path: b.path, Message: err.Error()})
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			f, err := facts.Parse([]byte(line))
			if err != nil {
				ps = append(ps, Problem{Code: "unparsable", Path: b.path, Message: err.Error()})
				continue
			}
			if id, err := facts.ComputeID([]byte(line)); err != nil || id != f.ID {
				ps = append(ps, Problem{Code: "bad-id", Path: b.path, Message: fmt.Sprintf("fact %s: its content hashes to %s", facts.Sanitize(f.ID, 40), id)})
			} else if c := facts.CheckStored(f, []byte(line), ""); c != nil {
				ps = append(ps, Problem{Code: c.Code, Path: b.path, Message: c.Message})
			} else if f.Time().After(l.horizon()) {
				ps = append(ps, Problem{Code: "future-time", Path: b.path,
					Message: fmt.Sprintf("fact %s is dated %s, in the future: held back until then", f.ID, facts.Sanitize(f.At, 40))})
			}
			if prev, dup := seen[f.ID]; dup {
				ps = append(ps, Problem{Code: "duplicate-id", Path: b.path, Message: fmt.Sprintf("fact %s also at %s", facts.Sanitize(f.ID, 40), prev)})
			}
			seen[f.ID] = b.path
			if !strings.HasSuffix(b.path, "/"+f.ID+".json") {
				ps = append(ps, Problem{Code: "misplaced", Path: b.path, Message: fmt.Sprintf("fact %s is stored under another name", facts.Sanitize(f.ID, 40))})
			}
		}
	}
	cps, err := l.checkClocks(head, maxCommits)
	if err != nil {
		ps = append(ps, Problem{Code: "missing-object", Message: err.Error()})
	}
	return append(ps, cps...), nil
}

// checkClocks walks the first-parent history from the root and checks that
// each commit's new facts have clocks above every clock its parent held.
func (l *Ledger) checkClocks(head refHash, maxCommits int) ([]Problem, error) {
	type step struct {
		tree    refHash
		parent  refHash
		isMerge bool
	}
	var chain []step
	for h := head; !h.IsZero(); {
		if len(chain) >= maxCommits {
			return nil, nil // too long to walk here; the other checks still ran
		}
		c, err := l.Store.ReadCommit(h)
		if err != nil {
			return nil, err
		}
		s := step{tree: c.Tree, isMerge: len(c.Parents) > 1 || strings.HasPrefix(c.Message, HealPrefix)}
		if len(c.Parents) > 0 {
			s.parent = c.Parents[0]
		}
		chain = append(chain, s)
		h = s.parent
	}
	var ps []Problem
	var max int64
	prevTree := refHashZero
	for i := len(chain) - 1; i >= 0; i-- {
		s := chain[i]
		added, err := l.diff(prevTree, s.tree)
		if err != nil && !errors.Is(err, errShrank) {
			return ps, err
		}
		var top int64
		for _, f := range l.parseBlobs(added) {
			if !s.isMerge && f.Clock <= max {
				ps = append(ps, Problem{Code: "clock", Message: fmt.Sprintf("fact %s has clock %d, not above %d already in the ledger its author read", f.ID, f.Clock, max)})
			}
			if f.Clock > top {
				top = f.Clock
			}
		}
		if top > max {
			max = top
		}
		prevTree = s.tree
	}
	return ps, nil
}
