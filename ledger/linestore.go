package ledger

import (
	"runtime"
	"slices"

	"github.com/git-rally/git-rally/facts"
)

// lineKey is one fact of a rebuild.
type lineKey struct {
	clock int64
	id    uint64 // the 16 hex digits of the id: their order is the id's
	// seq orders reading: of duplicates, the first one read wins (its
	// blob's index in a tree, its line in a mirror); the lines of one
	// blob are stored one after the other, so (chunk, off) orders them.
	// 32 bytes a key: a million facts' keys are 32 MB, not 40.
	seq   uint32
	chunk uint32
	off   uint32
	n     uint32
}

func (a lineKey) cmp(b lineKey) int {
	switch {
	case a.clock != b.clock:
		return cmpInt(a.clock, b.clock)
	case a.id != b.id:
		return cmpInt(a.id, b.id)
	}
	if a.seq != b.seq {
		return cmpInt(a.seq, b.seq)
	}
	if a.chunk != b.chunk {
		return cmpInt(a.chunk, b.chunk)
	}
	return cmpInt(a.off, b.off)
}

func cmpInt[T int64 | uint64 | uint32](a, b T) int {
	if a < b {
		return -1
	}
	if a > b {
		return 1
	}
	return 0
}

// arenaChunk is the size of the arena's chunks: a line is never copied
// again once stored, and the arena never holds a second copy while it
// grows.
var arenaChunk = 1 << 20

// lineStore collects the facts of a rebuild.
type lineStore struct {
	chunks [][]byte
	// spill holds the full chunks of a large rebuild on disk
	// (rebuildspill.go); a chunk written there is nil in chunks.
	spill    *spill
	spillDir string
	// The keys are collected in pages that never move (keyPage keys
	// each) and made one slice to sort: 100k keys are not copied again
	// and again as they grow.
	kpages   [][]lineKey
	nkeys    int
	keys     []lineKey
	retracts []retractRef
	// pos, when set, makes project take a checkpoint (cp) before the
	// first fact the reader holds back, or at the last point before it
	// that a checkpoint can be taken at (cachecheckpoint.go); pos gives
	// the mirror's length and CRC-32 so far.
	pos func() (int64, uint32)
	cp  *checkpoint
	// odd is set when a fact's id is not f_ and 16 hex digits (only a
	// checked fact is stored, so never in practice): the caller then
	// projects the old way.
	odd bool
}

// retractRef is a retraction seen in a rebuild.
type retractRef struct {
	key  lineKey
	id   string
	ref  string
	tool string
}

// scanned is a checked fact as the line store keeps it: its key, its
// stored line (with its newline) and, for a retraction, what it retracts.
type scanned struct {
	clock   int64
	id      uint64
	idOK    bool // the id is f_ and 16 hex digits (parseFactID)
	raw     []byte
	retract *retractRef
}

// addLine stores one scanned fact; seq orders duplicates.
func (ls *lineStore) addLine(f scanned, seq uint32) {
	if !f.idOK {
		ls.odd = true
		return
	}
	raw := f.raw
	last := len(ls.chunks) - 1
	if last < 0 || len(ls.chunks[last])+len(raw) > cap(ls.chunks[last]) {
		var next []byte
		if last >= 0 {
			next = ls.spillChunk(last)
		}
		if cap(next) < len(raw) {
			next = make([]byte, 0, max(arenaChunk, len(raw)))
		}
		ls.chunks = append(ls.chunks, next)
		last++
	}
	c := ls.chunks[last]
	k := lineKey{clock: f.clock, id: f.id, seq: seq, chunk: uint32(last), off: uint32(len(c)), n: uint32(len(raw))}
	ls.chunks[last] = append(c, raw...)
	if ls.nkeys%keyPage == 0 {
		ls.kpages = append(ls.kpages, make([]lineKey, 0, keyPage))
	}
	ls.kpages[len(ls.kpages)-1] = append(ls.kpages[len(ls.kpages)-1], k)
	ls.nkeys++
	if f.retract != nil {
		r := *f.retract
		r.key = k
		ls.retracts = append(ls.retracts, r)
	}
}

const keyPage = 4096

func (ls *lineStore) line(k lineKey) []byte {
	if c := ls.chunks[k.chunk]; c != nil {
		return c[k.off : k.off+k.n]
	}
	return ls.spilled(k.chunk)[k.off : k.off+k.n]
}

// parseFactID returns the number an id f_<16 hex digits> spells.
func parseFactID(id string) (uint64, bool) {
	if len(id) != 18 || id[:2] != "f_" {
		return 0, false
	}
	return lowerHex(id[2:])
}

// lowerHex returns the number at most 16 lowercase hex digits spell (ids
// are written lowercase; strconv.ParseUint would take A-F too).
func lowerHex(digits string) (uint64, bool) {
	if len(digits) > 16 {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uint64(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uint64(c-'a'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

// sortUnique orders the keys by (clock, id) and drops all but the first
// read of each id (the same id is the same content, so the same clock:
// duplicates are neighbours).
func (ls *lineStore) sortUnique() {
	if ls.nkeys >= 1<<17 {
		// The tree's listing is garbage by now but not collected yet:
		// collected before the keys are copied into one slice, or it and
		// both copies of the keys make the peak (a cold read of 1M facts:
		// git-rally's own peak RSS 151 MiB with it, 116 MiB without).
		runtime.GC()
	}
	ls.keys = make([]lineKey, 0, ls.nkeys)
	for i, p := range ls.kpages {
		ls.keys = append(ls.keys, p...)
		ls.kpages[i] = nil // the keys are not held twice
	}
	ls.kpages = nil
	slices.SortFunc(ls.keys, lineKey.cmp)
	out := ls.keys[:0]
	for i, k := range ls.keys {
		if i > 0 && k.id == out[len(out)-1].id && k.clock == out[len(out)-1].clock {
			continue
		}
		out = append(out, k)
	}
	ls.keys = out
}

// add stores f; seq orders duplicates.
func (ls *lineStore) add(f *facts.Fact, seq uint32) {
	id, ok := parseFactID(f.ID)
	var r *retractRef
	if f.Kind == facts.KindRetract && f.Ref != "" {
		r = &retractRef{id: f.ID, ref: f.Ref, tool: f.Tool}
	}
	ls.addLine(scanned{clock: f.Clock, id: id, idOK: ok, raw: f.Raw, retract: r}, seq)
}
