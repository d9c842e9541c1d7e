package ledger

import (
	"bytes"
	"crypto/sha1"
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
// history (its last ClockTail commits when it is longer than maxCommits),
// objects are present, the format is known, and no ref lock file is left
// over.
func (l *Ledger) Doctor(maxCommits int) ([]Problem, error) {
	ps, _, err := l.DoctorWindow(maxCommits)
	return ps, err
}

// ClockTail is the number of last commits doctor checks clocks over when
// the history is longer than its maxCommits, fewer when they added more
// than clockTailBlobs fact blobs (a blob holds one fact, or a segment's).
var ClockTail = 1000

// clockTailBlobs bounds the fact blobs the last commits doctor checks
// clocks over added.
var clockTailBlobs = 10_000

// DoctorWindow is Doctor that also returns, when the history is longer
// than maxCommits, the number of its last commits clocks were checked over
// (0: the whole history; an append is a commit: a busy ledger passes 5,000
// in days).
func (l *Ledger) DoctorWindow(maxCommits int) ([]Problem, int, error) {
	defer l.smallWindows()()
	defer lowGC()()
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
		return append(ps, Problem{Code: "bad-ref", Message: err.Error()}), 0, nil
	}
	if head.IsZero() {
		return ps, 0, nil
	}
	c, err := l.Store.ReadCommit(head)
	if err != nil {
		return append(ps, Problem{Code: "missing-object", Message: err.Error()}), 0, nil
	}
	root, err := l.Store.ReadTree(c.Tree)
	if err != nil {
		return append(ps, Problem{Code: "missing-object", Message: err.Error()}), 0, nil
	}
	format := false
	for _, e := range root {
		if e.Name == FormatFile && !e.Dir {
			format = true
			if e.Hash == formatBlobID() {
				continue // its id says its content (and spares reading the pack in-process)
			}
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
	fps, err := l.doctorFacts(c.Tree)
	if err != nil {
		return append(ps, Problem{Code: "missing-object", Message: err.Error()}), 0, nil
	}
	ps = append(ps, fps...)
	cps, window, err := l.checkClocks(head, maxCommits)
	if err != nil {
		ps = append(ps, Problem{Code: "missing-object", Message: err.Error()})
	}
	ps = append(ps, cps...)
	return append(ps, l.doctorCheckpoints()...), window, nil
}

// smallWindows has the store's cat-files read in small pack windows,
// and its ObjectReaders start a cat-file every doctorReadBudget reads,
// until the returned function is called: doctor reads every object once.
func (l *Ledger) smallWindows() func() {
	old, budget := l.Store.Windows, l.Store.ReadBudget
	l.Store.Windows = refs.SmallPackWindows()
	if l.largeIndex() {
		l.Store.ReadBudget = doctorReadBudget
	}
	return func() { l.Store.Windows, l.Store.ReadBudget = old, budget }
}

// largeIndex reports whether the pack indexes are larger than
// doctorIndexBytes: below, a git that touches all of them stays small,
// and doctor reads through one cat-file a walk and a stream (a cat-file
// costs 4 ms to start: at 1k facts doctor took twice as long in pieces).
func (l *Ledger) largeIndex() bool {
	return l.Store.IndexBytes() > doctorIndexBytes
}

// doctorIndexBytes is the size of the pack indexes from which doctor
// reads in pieces (about 140k objects).
var doctorIndexBytes int64 = 4 << 20

// doctorReadBudget is the number of objects doctor reads one at a time
// (its walks' trees and commits) through one cat-file. Each is a lookup
// at random in the pack's index, which git maps whole: at a million
// objects 50 trees read at random peaked at 13 MB, 200 at 24, 1000 at
// 33 (the index is 30 MB), and a cat-file costs 4 ms to start.
var doctorReadBudget = 64

// doctorRuns is the number of runs doctor reads a stream of n blobs in
// (refs.BlobStream.InRuns), each of the blobs of a range of ids through a
// cat-file of its own, runs of at least doctorRunMin: at a million
// objects a cat-file reading a chunk's 32k fact blobs in the tree's order
// peaked at 37 MB, a run of a quarter of them at 18.4 MB (an eighth: 15.4
// MB, for 2.5 s more CPU in all).
const (
	doctorRuns   = 4
	doctorRunMin = 1 << 8
)

// doctorStream is a blob stream of doctor's for n blobs.
func (l *Ledger) doctorStream(n int, fn func(i int, data []byte)) *refs.BlobStream {
	bs := l.Store.NewBlobStream(fn)
	if l.largeIndex() {
		bs.InRuns(max(doctorRunMin, (n+doctorRuns-1)/doctorRuns), n)
	}
	return bs
}

// clockStep is a commit of the clock walk: its tree, its first parent,
// and whether it is a merge (a heal counts as one).
type clockStep struct {
	tree    refHash
	parent  refHash
	isMerge bool
}

// checkClocks walks the first-parent history from the root and checks that
// each commit's new facts have clocks above every clock its parent held.
// Commits and trees are read through one cat-file (in-process, thousands
// of them would read the pack's index whole), and a step keeps only the
// trees of the step before (the old side of its diff): every tree read
// was kept, 45 MB for a thousand appends.
// A history longer than maxCommits is checked over its last ClockTail
// commits, or as many of them as added at most clockTailBlobs blobs
// (window, their number): the first of them against its parent's tree, each fact
// against the clocks the window added before it (the clocks of the facts
// before the window would take a walk of every fact). Past a large pack
// index its blobs are read through the walk's cat-file, as its trees.
func (l *Ledger) checkClocks(head refHash, maxCommits int) (ps []Problem, window int, err error) {
	or, err := l.Store.NewObjectReader()
	if err != nil {
		return nil, 0, err
	}
	defer or.Close()
	var chain []clockStep
	prevTree := refHashZero
	for h := head; !h.IsZero(); {
		if len(chain) >= maxCommits {
			// chain[w] is chain[w-1]'s parent: the window's base.
			w, err := l.clockWindow(or, chain, min(ClockTail, len(chain)-1))
			if err != nil {
				return nil, 0, err
			}
			prevTree, window, chain = chain[w].tree, w, chain[:w]
			break
		}
		c, err := or.ReadCommit(h)
		if err != nil {
			return nil, 0, err
		}
		s := clockStep{tree: c.Tree, isMerge: len(c.Parents) > 1 || strings.HasPrefix(c.Message, HealPrefix)}
		if len(c.Parents) > 0 {
			s.parent = c.Parents[0]
		}
		chain = append(chain, s)
		h = s.parent
	}
	readBlob := l.Store.ReadBlob
	if l.largeIndex() {
		readBlob = or.ReadBlob // in-process, each would map the pack's index whole
	}
	trees := newTreeGens(or.ReadTree)
	readTree := trees.read
	var max int64
	for i := len(chain) - 1; i >= 0; i-- {
		s := chain[i]
		var fs []clockAt
		var err error
		var top int64
		if prevTree.IsZero() {
			// The first commit, however large (a ledger imported in one
			// commit): walked a chunk at a time; nothing is above 0, so
			// only its greatest clock counts.
			fl, seen := &factList{}, 0
			chunk := func() error {
				seen += fl.n
				got, err := l.factClocks(fl.n, seen >= doctorStreamAt, readBlob, func(i int) (string, refs.Hash) { return fl.path(i), fl.blob(i).hash })
				for _, f := range got {
					top = max2(top, f.clock)
				}
				fl = &factList{}
				return err
			}
			err = walkTreeWith(or.ReadTree, s.tree, func(p []byte, isDir bool, h refs.Hash) {
				dir, name := "", p
				if k := bytes.LastIndexByte(p, '/'); k >= 0 {
					dir, name = string(p[:k]), p[k+1:]
				}
				if isFactEntry(dir, name, isDir) {
					fl.add(dir, name, h)
					if fl.n >= doctorChunk && err == nil {
						err = chunk()
					}
				}
			})
			if err == nil {
				err = chunk()
			}
		} else {
			var added []blobRef
			added, err = l.diffWith(readTree, prevTree, s.tree, 0)
			if err != nil && !errors.Is(err, errShrank) {
				return ps, window, err
			}
			fs, err = l.factClocks(len(added), len(added) >= doctorStreamAt, readBlob, func(i int) (string, refs.Hash) { return added[i].path, added[i].hash })
		}
		if err != nil {
			return ps, window, err
		}
		for _, f := range fs {
			if !s.isMerge && f.clock <= max {
				ps = append(ps, Problem{Code: "clock", Message: fmt.Sprintf("fact %s has clock %d, not above %d already in the ledger its author read", f.id, f.clock, max)})
			}
			if f.clock > top {
				top = f.clock
			}
		}
		if top > max {
			max = top
		}
		prevTree = s.tree
		trees.next()
	}
	return ps, window, nil
}

// clockWindow returns how many of chain's newest steps (at most w) added
// at most clockTailBlobs blobs in all, at least one: their diffs, newest
// first, trees only.
func (l *Ledger) clockWindow(or *refs.ObjectReader, chain []clockStep, w int) (int, error) {
	trees := newTreeGens(or.ReadTree)
	n := 0
	for i := 0; i < w; i++ {
		added, err := l.diffWith(trees.read, chain[i+1].tree, chain[i].tree, 0)
		if err != nil && !errors.Is(err, errShrank) {
			return 0, err
		}
		if n += len(added); n > clockTailBlobs && i > 0 {
			return i, nil
		}
		trees.next()
	}
	return w, nil
}

func max2(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// formatBlobID is the id git gives the format marker's content.
func formatBlobID() refs.Hash {
	return refs.Hash(sha1.Sum([]byte(fmt.Sprintf("blob %d\x00%s", len(FormatContent), FormatContent))))
}
