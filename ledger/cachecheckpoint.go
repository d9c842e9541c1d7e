package ledger

import (
	"bytes"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/git-rally/git-rally/facts"
)

// A fact dated more than FutureSkew after the reader's clock is held back
// (State.Held) and counted in State.Last, so when it comes due it sorts
// before facts already applied and the projection must be built again.
// Built again from the whole mirror, that made every read of a ledger
// holding a stream of future-dated facts (a teammate's clock ahead, a
// generator, a remote) cost a cold rebuild: 2.7 s and 290 MB at 200k
// facts, 19 s and 1.8 GB at 1M, where a warm read costs 10 ms.
//
// The checkpoint is the projection of the mirror's first lines, up to just
// before the first fact held back, with the mirror position after them:
//
//	checkpoint.bin   sealed ("checkpoint"): the mirror generation, the
//	                 length of its prefix and that prefix's CRC-32, then
//	                 the projection of the prefix (state.bin's encoding
//	                 with every claim in it, then its handoffs)
//
// A due fact is then brought in by replaying only the mirror after the
// checkpoint: the facts since the first one held back, not the history.
// It is machine-local derived data like the rest of the cache, computed
// here from facts this reader checked; it is believed only when its
// generation is the saved state's, the mirror's tail after it continues
// its CRC-32 to the saved state's, the line counts add up and the tail
// sorts after it; otherwise the projection is built again from the mirror.
const checkpointFile = "checkpoint.bin"

// checkpoint is a projection of the first lines of a mirror generation.
type checkpoint struct {
	gen int
	n   int64  // bytes of the mirror it holds
	sum uint32 // their CRC-32
	st  *facts.State
	// ignore lists retractions (by id) whose target no fact has.
	ignore map[string]bool
}

// CheckpointReplays counts the reads that brought due facts in from the
// checkpoint, and checkpointLines the mirror lines they replayed (tests).
var CheckpointReplays, checkpointLines atomic.Int64

// encodeCheckpoint encodes st, the projection of the first n bytes of
// mirror generation gen (whose CRC-32 is sum).
func encodeCheckpoint(gen int, n int64, sum uint32, st *facts.State, ignore map[string]bool) []byte {
	var e encoder
	e.int(int64(gen))
	e.int(n)
	e.uint(uint64(sum))
	encodeFlatState(&e, st)
	encodeMap(&e, ignore, func(*encoder, bool) {})
	return seal(e.b, "checkpoint", "")
}

// decodeCheckpoint is the inverse of encodeCheckpoint; nil when the bytes
// are damaged or not a checkpoint of this version.
func decodeCheckpoint(b []byte) (cp *checkpoint) {
	defer func() {
		if recover() != nil { // on bytes that passed the checksum: a bug, not a crash
			cp = nil
		}
	}()
	payload, ok := openSealed(b, "checkpoint", "")
	if !ok {
		return nil
	}
	d := &decoder{b: payload}
	gen, n, sum := int(d.int()), d.int(), uint32(d.uint())
	st, cf := decodeState(d)
	hb := d.bytes()
	ignore := decodeMap(d, func(*decoder) bool { return true })
	if d.bad || len(d.b) != 0 || cf.ClaimsFile != "" || len(st.Claims.Gone) > 0 || st.Held > 0 || n < 0 {
		return nil
	}
	hb = append([]byte{}, hb...)
	st.SetPendingHandoffs(&facts.PendingHandoffs{Enc: hb, Decode: decodeHandoffs})
	if _, err := decodeHandoffs(hb); err != nil {
		return nil
	}
	st.Init()
	return &checkpoint{gen: gen, n: n, sum: sum, st: st, ignore: ignore}
}

// saveCheckpoint writes a checkpoint file (in place, as state.bin).
// Failures are ignored: the next due fact rebuilds from the mirror.
func (c *cache) saveCheckpoint(b []byte) {
	if b != nil && os.MkdirAll(c.dir, 0o777) == nil {
		overwrite(filepath.Join(c.dir, checkpointFile), b)
	}
}

func (c *cache) loadCheckpoint() *checkpoint {
	b, err := os.ReadFile(filepath.Join(c.dir, checkpointFile))
	if err != nil {
		return nil
	}
	return decodeCheckpoint(b)
}

// checkpointBefore is called by a catch-up or an append that applies new
// facts to the saved state st: when st holds no fact back and the new
// facts do, or they pass a multiple of checkpointEvery facts, st is the
// checkpoint (the mirror's lines so far, nothing held). The caller
// holds the cache lock and has not saved the new state yet.
func (c *cache) checkpointBefore(st *facts.State, next *facts.State) {
	if st.Held > 0 || c.saved == nil || c.saved.State != st || st.Damaged {
		return
	}
	// Also every checkpointEvery facts, for the merges to come.
	if next.Held == 0 && st.Facts/checkpointEvery == next.Facts/checkpointEvery {
		return
	}
	c.saveCheckpoint(encodeCheckpoint(c.saved.Gen, c.saved.MirrorLen, c.saved.MirrorSum, st, nil))
}

// heldAt reports whether a reader whose horizon is hz holds f back (as
// State.held decides).
func heldAt(f *facts.Fact, hz time.Time) bool { return !hz.IsZero() && f.Time().After(hz) }

// replayCheckpoint brings the saved state st, some of whose held-back
// facts came due, to the reader's horizon hz from the checkpoint: the
// mirror's tail after it is projected on top of it as a rebuild projects
// (projectFrom), and a new checkpoint is taken before the first fact still
// held back. It reports false when there is no checkpoint it can believe
// or the tail retracts something it cannot see; the caller then builds
// the projection again.
func (l *Ledger) replayCheckpoint(st *facts.State, hz time.Time) (*facts.State, bool) {
	cp, ls, ok := l.cache.checkpointTail(st)
	if !ok {
		return nil, false
	}
	c := l.cache
	n, sum := cp.n, cp.sum
	ls.pos = func() (int64, uint32) { return n, sum }
	s, err := ls.projectFrom(cp, hz, func(line []byte, _ *facts.Fact) {
		n += int64(len(line))
		sum = crc32.Update(sum, crcTable, line)
	})
	if err != nil {
		return nil, false
	}
	s.Head, s.Tree = st.Head, st.Tree
	CheckpointReplays.Add(1)
	c.saveWith(s, mirrorGen{c.saved.Gen, c.saved.MirrorLen, c.saved.MirrorSum})
	if next := ls.cp; next != nil && next.n > cp.n {
		c.saveCheckpoint(encodeCheckpoint(cp.gen, next.n, next.sum, next.st, next.ignore))
	}
	return s, true
}

// checkpointTail loads the checkpoint of the saved state st and the
// mirror's lines after it into a line store, when both can be believed.
func (c *cache) checkpointTail(st *facts.State) (*checkpoint, *lineStore, bool) {
	if c.saved == nil || c.saved.State != st {
		return nil, nil, false
	}
	cp := c.loadCheckpoint()
	if cp == nil || cp.gen != c.saved.Gen || cp.n > c.saved.MirrorLen {
		return nil, nil, false
	}
	f, ok := c.openMirror(st)
	if !ok {
		return nil, nil, false
	}
	tail := make([]byte, c.saved.MirrorLen-cp.n)
	_, err := f.ReadAt(tail, cp.n)
	f.Close()
	mirrorRead.Add(int64(len(tail)))
	if err != nil || crc32.Update(cp.sum, crcTable, tail) != c.saved.MirrorSum {
		return nil, nil, false
	}
	ls := &lineStore{}
	prev := cp.st.Last
	for rest, seq := tail, uint32(0); len(rest) > 0; seq++ {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			return nil, nil, false
		}
		fact, err := facts.Parse(rest[:i+1])
		if err != nil || !prev.Less(fact.Key()) {
			return nil, nil, false
		}
		prev = fact.Key()
		ls.add(fact, seq)
		rest = rest[i+1:]
	}
	checkpointLines.Add(int64(ls.nkeys))
	if ls.odd || cp.st.Facts+ls.nkeys != st.Facts {
		return nil, nil, false
	}
	return cp, ls, true
}

// mergeCheckpoint brings the saved state st to head when the new facts
// fs sort before facts it holds (a merge) but after its checkpoint: the
// checkpoint's projection, then the mirror's lines after it and fs
// projected together, as a rebuild projects them, into a new mirror
// generation that copies the lines (and index records) before the
// checkpoint as they are. It reports false when that cannot be done;
// the caller then rebuilds from the whole mirror.
func (l *Ledger) mergeCheckpoint(st *facts.State, fs []*facts.Fact, hz time.Time, head, tree string) (*facts.State, bool) {
	c := l.cache
	cp, ls, ok := c.checkpointTail(st)
	if !ok {
		return nil, false
	}
	for i, f := range fs {
		if !cp.st.Last.Less(f.Key()) {
			return nil, false
		}
		ls.add(f, 1<<31|uint32(i))
	}
	if ls.odd {
		return nil, false
	}
	old, err := os.Open(c.mirrorPath(cp.gen))
	if err != nil {
		return nil, false
	}
	defer old.Close()
	oldIdx, err := os.Open(c.indexPath(cp.gen))
	if err != nil {
		return nil, false
	}
	defer oldIdx.Close()
	var s *facts.State
	mg, err := c.writeMirror(func(mw *mirrorWriter) error {
		if _, err := io.Copy(mw.cw, io.NewSectionReader(old, 0, cp.n)); err != nil {
			return facts.ErrRebuild
		}
		if mw.cw.n != cp.n || mw.cw.sum != cp.sum {
			return facts.ErrRebuild
		}
		if mw.idx != nil {
			if n, err := io.Copy(mw.idx, io.NewSectionReader(oldIdx, 0, int64(cp.st.Facts)*indexRecord)); err != nil || n != int64(cp.st.Facts)*indexRecord {
				return facts.ErrRebuild
			}
		}
		ls.pos = func() (int64, uint32) { return mw.cw.n, mw.cw.sum }
		var err error
		s, err = ls.projectFrom(cp, hz, func(line []byte, f *facts.Fact) { mw.add(line, f) })
		return err
	})
	if err != nil {
		return nil, false
	}
	s.Head, s.Tree = head, tree
	CheckpointMerges.Add(1)
	c.saveWith(s, mg)
	next := ls.cp
	if next == nil || next.n <= cp.n {
		next = cp // the same lines before it in the new generation
	}
	c.saveCheckpoint(encodeCheckpoint(mg.gen, next.n, next.sum, next.st, next.ignore))
	return s, true
}

// CheckpointMerges counts the merges projected from the checkpoint (tests).
var CheckpointMerges atomic.Int64

// checkpointEvery is how often (in facts) a rebuild keeps a copy of the
// projection so far, for the checkpoint, when it cannot take one right
// before the first fact held back: a replay then decodes at most this
// many facts more.
var checkpointEvery = 4096

// checkpointPoints is where a rebuild stands in taking its checkpoint.
// The projection so far of a rebuild (BuildAt) is the checkpoint: it
// already holds every retraction of the ledger in State.Retraction (a
// fact retracted later was never applied), and a replay after it checks
// that a retraction of a fact before it is one of those.
type checkpointPoints struct {
	// ignore lists the retractions that count for nothing (an id no
	// fact has, another's fact, a fact retracted already) by where they
	// are: a checkpoint carries those after it, so a replay knows they
	// retract nothing before it.
	ignore map[string]lineKey
	n      int // facts seen
	done   bool
}

func (cp *checkpointPoints) ignored(id string, at lineKey) {
	if cp.ignore == nil {
		cp.ignore = map[string]lineKey{}
	}
	cp.ignore[id] = at
}

// checkpointAt is called by project before each fact (at k), which
// the reader holds back when held: it keeps a copy of the projection so
// far every checkpointEvery facts and right before the first fact held
// back, and stops there. With nothing held back, the last copy (at most
// checkpointEvery facts from the end) is the checkpoint for the merges
// to come.
func (ls *lineStore) checkpointAt(cps *checkpointPoints, s *facts.State, k lineKey, held bool) {
	if cps.done {
		return
	}
	i := cps.n
	cps.n++
	if held {
		cps.done = true
	} else if i%checkpointEvery != 0 {
		return
	}
	cp := s.Clone()
	cp.Forget()
	n, sum := ls.pos()
	ignore := map[string]bool{}
	for id, at := range cps.ignore {
		if at.cmp(k) >= 0 {
			ignore[id] = true
		}
	}
	ls.cp = &checkpoint{n: n, sum: sum, st: cp, ignore: ignore}
}
