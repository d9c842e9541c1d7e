package ledger

import (
	"os"
	"runtime"
	"sync"
	"sync/atomic"
)

// A rebuild keeps every fact's line until the keys are sorted and the
// lines projected in order: the ledger's text, 195 MB at a million facts,
// most of a cold room's peak memory. Past spillAfter bytes, each full
// chunk of the arena is written to an unlinked file in the cache
// directory instead and read back, a chunk at a time, when the projection
// reaches its lines: the keys are in (clock, id) order and the lines
// were stored in the tree's order (by day, then segment), so the
// projection reads the chunks about in the order they were written, and a
// few kept in memory serve it. The file is the page cache's, not the
// process's; a rebuild whose file cannot be written keeps its lines in
// memory, as before.
var spillAfter = 8 << 20

// chunksSpilled counts the chunks rebuilds wrote to disk, chunksRead
// those read back (tests).
var chunksSpilled, chunksRead atomic.Int64

// spillKeep is how many chunks read back are kept at least; with more
// decoding goroutines, three for each (a batch of lines spans one or two
// chunks at scale): fewer, and the decoders evict the chunks each other's
// batches still need, so chunks are read back again and again.
const spillKeep = 8

func spillKept() int { return max(spillKeep, 3*runtime.GOMAXPROCS(0)) }

type spill struct {
	f   *os.File
	at  []int64 // per chunk, where it is in f (-1: in memory)
	len []int
	n   int64 // bytes written
	mu  sync.Mutex
	// kept are the chunks read back, the latest used last.
	kept []keptChunk
	bad  bool // not written: chunks stay in memory
	// failed is set when a chunk could not be read back: the
	// projection is not believed (project returns errRebuild).
	failed bool
}

type keptChunk struct {
	i    uint32
	data []byte
}

// spillTo makes ls write its full chunks past spillAfter to an unlinked
// file in dir.
func (ls *lineStore) spillTo(dir string) {
	if dir != "" {
		ls.spill = &spill{}
		ls.spillDir = dir
	}
}

// spillChunk writes chunk i, full, to the spill file when the arena is
// past spillAfter, and returns its buffer emptied, for the next chunk: a
// line store's first pass holds no slice of its chunks (the projection
// reads them back), so a million facts' arena is not 195 MB allocated
// (nil: not written).
func (ls *lineStore) spillChunk(i int) []byte {
	sp := ls.spill
	if sp == nil || sp.bad || (i+1)*arenaChunk <= spillAfter {
		return nil
	}
	if sp.f == nil {
		if err := os.MkdirAll(ls.spillDir, 0o777); err != nil {
			sp.bad = true
			return nil
		}
		f, err := os.CreateTemp(ls.spillDir, "rebuild-*.tmp")
		if err != nil {
			sp.bad = true
			return nil
		}
		os.Remove(f.Name()) // it lives while it is open
		sp.f = f
	}
	c := ls.chunks[i]
	if _, err := sp.f.WriteAt(c, sp.n); err != nil {
		sp.bad = true
		return nil
	}
	for len(sp.at) <= i {
		sp.at, sp.len = append(sp.at, -1), append(sp.len, 0)
	}
	sp.at[i], sp.len[i] = sp.n, len(c)
	sp.n += int64(len(c))
	ls.chunks[i] = nil
	chunksSpilled.Add(1)
	return c[:0]
}

// spilled returns chunk i read back from the spill file. Readers hold
// the chunk they were given: it is never reused, only dropped.
func (ls *lineStore) spilled(i uint32) []byte {
	sp := ls.spill
	sp.mu.Lock()
	defer sp.mu.Unlock()
	for j := len(sp.kept) - 1; j >= 0; j-- {
		if c := sp.kept[j]; c.i == i {
			// The newest used is the last dropped: the decoding
			// goroutines read a few batches' lines at once.
			copy(sp.kept[j:], sp.kept[j+1:])
			sp.kept[len(sp.kept)-1] = c
			return c.data
		}
	}
	chunksRead.Add(1)
	data := make([]byte, sp.len[i])
	if _, err := sp.f.ReadAt(data, sp.at[i]); err != nil {
		sp.failed = true // the file was ours and unlinked: an I/O error
		return data
	}
	if len(sp.kept) >= spillKept() {
		sp.kept = append(sp.kept[:0], sp.kept[1:]...)
	}
	sp.kept = append(sp.kept, keptChunk{i, data})
	return data
}

// release closes the spill file.
func (ls *lineStore) release() {
	if ls.spill != nil && ls.spill.f != nil {
		ls.spill.f.Close()
		ls.spill.f = nil
	}
}
