package ledger

import (
	"fmt"
	"time"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// LedgerRef is the ref the ledger lives on.
const LedgerRef = "refs/rally/ledger"

// Layout of a ledger commit's tree:
//
//	format                              "git-rally ledger 1"
//	facts/YYYY-MM/DD/NNNN/<id>.json     one fact per blob
//
// The time path is the append's (UTC) date; NNNN is a segment number that
// grows when the newest segment holds segMax facts. Every level stays
// small (months, days, segments of a day), so an append writes a blob,
// five small trees and a commit whatever the ledger's size, and the
// newest segment is always the one an append touches. The segment tree is
// the largest an append rewrites (about 51 bytes a fact, so 13 KB full);
// segments of 64 made it 3 KB but a day's tree 4x longer, and a sync of
// 10,000 facts 2.3 s instead of 1.8 s (more trees to read on fetch).
const (
	FormatFile    = "format"
	FormatContent = "git-rally ledger 1\n"
	factsDir      = "facts"
	segMax        = 256
)

// LayoutDirs are the directories, from the root, of the segments an
// append at now writes into.
func LayoutDirs(now time.Time) []string {
	now = now.UTC()
	return []string{factsDir, now.Format("2006-01"), now.Format("02")}
}

// Ledger reads and appends facts on refs/rally/ledger of one repository.
type Ledger struct {
	// linesAt is the state an append writes on: the segment blob of a
	// segment it fills takes its lines from that state's mirror.
	linesAt *facts.State
	// noSeal leaves the segments an append closes unsealed, as appends
	// did before (BenchmarkAppendClosing's baseline).
	noSeal bool
	Store  *refs.Store
	Now    func() time.Time
	cache  *cache
	// Warnings collects lines that could not be read, for the caller to
	// show on stderr.
	Warnings []string
	// AutoPack starts a background incremental pack after an append once
	// loose objects pile up (see refs.Store.MaybePack).
	AutoPack bool
	// Signing is the repository's signing configuration (signing.go).
	Signing  Signing
	verifier *Verifier // the last Verifier, at its head
	// Ignored counts the facts the last View left out.
	Ignored int
	trusted *facts.State
	allowed refs.AllowedSigners // the allowed-signers file, read by checkVerdicts
	// mergingTracking is set while MergeTracking runs (its own merge and
	// risk append must not start another).
	mergingTracking bool
	// healing is set while Append heals the ledger before it appends.
	healing      bool
	trackingMemo map[string]string // fetched heads merged (rally/tracking)
	// NoTracking turns off merging fetched ledgers before reads and
	// appends (sync does its own merging).
	NoTracking bool
	// last is the projection this process read or wrote last: a command
	// that resolves an id, checks and appends loads the cache once.
	last *facts.State
}

// Open opens the ledger of the repository whose common dir is given.
func Open(commonDir string, now func() time.Time) (*Ledger, error) {
	return OpenConfig(commonDir, now, refs.ReadConfig(commonDir, ""))
}

// OpenConfig is Open with the repository's configuration already read
// (a command that reads it for other settings reads it once).
func OpenConfig(commonDir string, now func() time.Time, cfg *refs.Config) (*Ledger, error) {
	st, err := refs.Open(commonDir)
	if err != nil {
		return nil, err
	}
	if now == nil {
		now = time.Now
	}
	l := &Ledger{Store: st, Now: now, cache: newCache(commonDir)}
	l.configureSigning(cfg)
	return l, nil
}

// Close releases the store.
func (l *Ledger) Close() error { return l.Store.Close() }

// Head returns the ledger's current commit, zero when there is none.
func (l *Ledger) Head() (refs.Hash, error) { return l.Store.ReadRef(LedgerRef) }

// Read returns the projection at the current head, bringing the cache up
// to date with a tree diff when the ledger moved.
func (l *Ledger) Read() (*facts.State, error) {
	if !l.NoTracking {
		l.MergeTracking()
	}
	head, err := l.Head()
	if err != nil {
		return nil, err
	}
	if l.last != nil && l.last.Head == hashString(head) && !l.last.FutureDue(l.horizon()) {
		return l.last, nil
	}
	if st := l.cache.load(); st != nil && st.Head == hashString(head) && !st.FutureDue(l.horizon()) {
		l.last = st
		return st, nil
	}
	unlock := l.cache.lock()
	defer unlock()
	return l.catchUp(head)
}

func hashString(h refs.Hash) string {
	if h.IsZero() {
		return ""
	}
	return h.String()
}

// catchUp brings the cached state to head. The caller holds the cache lock.
func (l *Ledger) catchUp(head refs.Hash) (*facts.State, error) {
	if l.last != nil && l.last.Head == hashString(head) && !l.last.FutureDue(l.horizon()) {
		return l.last, nil
	}
	st, err := l.catchUpCache(head)
	if err == nil {
		l.last = st
	}
	return st, err
}

// catchUpCache is catchUp without the in-process memo.
func (l *Ledger) catchUpCache(head refs.Hash) (*facts.State, error) {
	hz := l.horizon()
	st := l.cache.load()
	if st0 := st; st != nil && st.FutureDue(hz) {
		// A fact held back as dated in the future is due: build again.
		// Replayed from the checkpoint: the facts since the first one
		// held back, not the whole mirror.
		var ok bool
		if st, ok = l.replayCheckpoint(st0, hz); !ok {
			st = nil
			defer lowGC()()
			if ls, ok := l.cache.mirrorStore(st0); ok {
				if !ls.odd {
					st, _ = l.rebuildInto(ls, hz, st0.Head, st0.Tree)
				}
				ls.release()
			}
		}
	}
	if st != nil && st.Head == hashString(head) {
		return st, nil
	}
	if head.IsZero() {
		st = facts.NewState()
		l.cache.save(st, nil, true)
		return st, nil
	}
	// A cold read reads the commit and the trees through one cat-file:
	// in-process, the first packed object read loads the pack's index
	// (refs.ObjectReader).
	var or *refs.ObjectReader
	if st == nil {
		if r, err := l.Store.NewObjectReader(); err == nil {
			or = r
			defer or.Close()
		}
	}
	var c refs.Commit
	var err error
	if or != nil {
		c, err = or.ReadCommit(head)
	} else {
		c, err = l.Store.ReadCommit(head)
	}
	if err != nil {
		return nil, fmt.Errorf("reading ledger head: %w", err)
	}
	if st != nil && st.Tree != "" {
		old, _ := refs.ParseHash(st.Tree)
		// More new facts than bigCatchUp are not decoded and held at
		// once (1.8 KB a Fact): the projection is rebuilt from the tree,
		// streamed, as a cold read is. A fresh clone's first read after
		// `init --remote` fetched a million facts held every one: 2.09 GB.
		added, err := l.diffUpTo(old, c.Tree, bigCatchUp)
		if err == nil {
			fs := l.parseBlobs(added)
			cp := st.Clone()
			cp.SetHorizon(hz)
			if err := cp.Apply(append([]*facts.Fact(nil), fs...)); err == nil {
				cp.Head, cp.Tree = head.String(), c.Tree.String()
				l.cache.checkpointBefore(st, cp)
				l.cache.saveFrom(st, cp, fs, false)
				return cp, nil
			}
			// Out of order (a merge) or an undo: from the checkpoint
			// when the new facts come after it, else rebuild from the
			// mirror plus the new facts.
			defer lowGC()()
			if nst, ok := l.mergeCheckpoint(st, fs, hz, head.String(), c.Tree.String()); ok {
				return nst, nil
			}
			if ls, ok := l.cache.mirrorStore(st); ok {
				for i, f := range fs {
					ls.add(f, 1<<31|uint32(i))
				}
				if !ls.odd {
					if nst, err := l.rebuildInto(ls, hz, head.String(), c.Tree.String()); err == nil {
						return nst, nil
					}
				}
				ls.release()
			}
		}
	}
	nw := len(l.Warnings)
	defer lowGC()()
	ls, err := l.readStore(c.Tree, or)
	if err != nil {
		return nil, err
	}
	if !ls.odd {
		if nst, err := l.rebuildInto(ls, hz, head.String(), c.Tree.String()); err == nil {
			return nst, nil
		}
	}
	ls.release()
	// Not reached with facts this version checked: the old way.
	l.Warnings = l.Warnings[:nw]
	all, err := l.readAll(c.Tree)
	if err != nil {
		return nil, err
	}
	all = dedupe(all)
	nst := facts.BuildAt(all, hz)
	nst.Head, nst.Tree = head.String(), c.Tree.String()
	l.cache.save(nst, all, true)
	return nst, nil
}

// bigCatchUp is the most new facts a catch-up decodes and applies at
// once (about 115 MB of Facts); more are read as a cold read reads.
var bigCatchUp = 1 << 16

// horizon is the reader's clock plus FutureSkew: a fact dated later is
// held back (State.Held).
func (l *Ledger) horizon() time.Time { return l.Now().UTC().Add(facts.FutureSkew) }

func dedupe(fs []*facts.Fact) []*facts.Fact {
	seen := make(map[string]bool, len(fs))
	out := fs[:0]
	for _, f := range fs {
		if !seen[f.ID] {
			seen[f.ID] = true
			out = append(out, f)
		}
	}
	return out
}

func (l *Ledger) warn(format string, a ...any) {
	l.Warnings = append(l.Warnings, fmt.Sprintf(format, a...))
}

type refHash = refs.Hash

var refHashZero = refs.ZeroHash
