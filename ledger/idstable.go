package ledger

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
)

// The ids table, facts-<gen>.ids beside the index, lists the index's
// first records by id, in blocks each with its own CRC, so a lookup reads
// and checks the block it needs, not the table: a 24-byte header ("rid2",
// the records it covers, the entries a block, the check of the last
// record it covers, the number of blocks, the CRC-32 of the fences), the
// fences (per block its first id and the CRC-32 of its entries, 12 bytes),
// then per record its id (0 for an id of another form) and its number, 12
// bytes, in id order. An id lookup (`show <id>`) reads the header and the
// fences, finds the blocks that may hold the prefix (and those of ids of
// another form, first in the order), reads those and the records appended
// since the table; scanning the whole index (36 bytes a fact, each
// record's CRC checked) was 40 ms of CPU at a million facts against a bar
// of 30 ms for `show`, and reading and checking a table of one block (12
// MB) made show's memory grow with the history (9 MiB at 100k, 20 MiB at
// 1M). The first lookup of a mirror generation of idsTableAt facts or
// more scans the index as before and writes the table. A table whose
// header, fences, size, last record or a block read does not hold is not
// used (the index is scanned) and is written again.
const (
	idsEntry  = 12
	idsHeader = 24
)

// idsBlock is the entries a block holds (48 KB; a variable for tests).
var idsBlock = 4096

// idsTableAt is the number of facts from which a lookup keeps a table.
var idsTableAt = 1 << 14

// indexRecordsRead counts the index records id lookups read (tests).
var indexRecordsRead atomic.Int64

// idsTableRead counts the bytes of ids tables lookups read (tests).
var idsTableRead atomic.Int64

func (c *cache) idsPath(gen int) string {
	return filepath.Join(c.dir, fmt.Sprintf("facts-%d.ids", gen))
}

// idsTable is an open table: its header and fences.
type idsTable struct {
	f       *os.File
	covered int
	per     int
	fences  []byte
}

// openIdsTable opens the table of generation gen for ix; false when it
// is missing or its header, fences or size do not hold.
func (c *cache) openIdsTable(gen int, ix *mirrorIndex) (*idsTable, bool) {
	f, err := os.Open(c.idsPath(gen))
	if err != nil {
		return nil, false
	}
	t := &idsTable{f: f}
	ok := false
	defer func() {
		if !ok {
			f.Close()
		}
	}()
	var h [idsHeader]byte
	if _, err := f.ReadAt(h[:], 0); err != nil || string(h[:4]) != "rid2" {
		return nil, false
	}
	idsTableRead.Add(idsHeader)
	t.covered = int(binary.LittleEndian.Uint32(h[4:]))
	t.per = int(binary.LittleEndian.Uint32(h[8:]))
	nb := int(binary.LittleEndian.Uint32(h[16:]))
	if t.covered == 0 || t.covered > ix.n || t.per == 0 || nb != (t.covered+t.per-1)/t.per {
		return nil, false
	}
	fi, err := f.Stat()
	if err != nil || fi.Size() != int64(idsHeader+nb*idsEntry+t.covered*idsEntry) {
		return nil, false
	}
	t.fences = make([]byte, nb*idsEntry)
	if _, err := f.ReadAt(t.fences, idsHeader); err != nil || crc32.Checksum(t.fences, crcTable) != binary.LittleEndian.Uint32(h[20:]) {
		return nil, false
	}
	idsTableRead.Add(int64(len(t.fences)))
	// Bound to the index: the last record it covers is the one it saw.
	var r [indexRecord]byte
	if _, err := ix.idx.ReadAt(r[:], int64(t.covered-1)*indexRecord); err != nil ||
		binary.LittleEndian.Uint32(r[32:]) != binary.LittleEndian.Uint32(h[12:]) {
		return nil, false
	}
	ok = true
	return t, true
}

func (t *idsTable) Close() { t.f.Close() }

// fence returns block b's first id.
func (t *idsTable) fence(b int) uint64 { return binary.LittleEndian.Uint64(t.fences[b*idsEntry:]) }

// block reads block b's entries, checked against its CRC.
func (t *idsTable) block(b int) ([]byte, bool) {
	n := min(t.per, t.covered-b*t.per)
	e := make([]byte, n*idsEntry)
	off := int64(idsHeader + len(t.fences) + b*t.per*idsEntry)
	if _, err := t.f.ReadAt(e, off); err != nil || crc32.Checksum(e, crcTable) != binary.LittleEndian.Uint32(t.fences[b*idsEntry+8:]) {
		return nil, false
	}
	idsTableRead.Add(int64(len(e)))
	return e, true
}

// lookup returns the numbers of the records the table lists with an id
// whose digits >> shift are want, or 0 (an id of another form), in record
// order; false when a block it reads does not hold.
func (t *idsTable) lookup(want uint64, shift uint) ([]int, bool) {
	nb := len(t.fences) / idsEntry
	// The range of ids with the prefix (shift 64, no digits: every id;
	// Go's shifts past the width give 0).
	lo := want << shift
	hi := lo | (uint64(1)<<shift - 1)
	var out []int
	seen := -1
	scan := func(b int) bool {
		if b <= seen {
			return true
		}
		seen = b
		e, ok := t.block(b)
		if !ok {
			return false
		}
		for i := 0; i < len(e)/idsEntry; i++ {
			id := binary.LittleEndian.Uint64(e[i*idsEntry:])
			if id == 0 || id>>shift == want {
				out = append(out, int(binary.LittleEndian.Uint32(e[i*idsEntry+8:])))
			}
		}
		return true
	}
	// Ids of another form (0) sort first: the blocks that start with one.
	for b := 0; b < nb && t.fence(b) == 0; b++ {
		if !scan(b) {
			return nil, false
		}
	}
	// The last block starting below lo (its end may hold lo), and on
	// while they start within the range.
	first := max(sortSearch(nb, func(b int) bool { return t.fence(b) >= lo })-1, 0)
	for b := first; b < nb && (b == first || t.fence(b) <= hi); b++ {
		if !scan(b) {
			return nil, false
		}
	}
	slices.Sort(out)
	return slices.Compact(out), true
}

// writeIdsTable writes the table of the first len(ids) records of ix;
// lastCheck is the check of the last one. Errors leave no table.
func (c *cache) writeIdsTable(gen int, ids []idRec, lastCheck uint32) {
	slices.SortFunc(ids, func(a, b idRec) int { return cmp.Or(cmp.Compare(a.id(), b.id()), cmp.Compare(a.rec, b.rec)) })
	per := idsBlock
	nb := (len(ids) + per - 1) / per
	block := make([]byte, per*idsEntry)
	encode := func(b int) []byte {
		e := block[:0]
		for _, r := range ids[b*per : min(len(ids), (b+1)*per)] {
			e = binary.LittleEndian.AppendUint64(e, r.id())
			e = binary.LittleEndian.AppendUint32(e, r.rec)
		}
		return e
	}
	fences := make([]byte, 0, nb*idsEntry)
	for b := 0; b < nb; b++ {
		fences = binary.LittleEndian.AppendUint64(fences, ids[b*per].id())
		fences = binary.LittleEndian.AppendUint32(fences, crc32.Checksum(encode(b), crcTable))
	}
	h := make([]byte, idsHeader)
	copy(h, "rid2")
	binary.LittleEndian.PutUint32(h[4:], uint32(len(ids)))
	binary.LittleEndian.PutUint32(h[8:], uint32(per))
	binary.LittleEndian.PutUint32(h[12:], lastCheck)
	binary.LittleEndian.PutUint32(h[16:], uint32(nb))
	binary.LittleEndian.PutUint32(h[20:], crc32.Checksum(fences, crcTable))
	f, err := os.CreateTemp(c.dir, filepath.Base(c.idsPath(gen))+".*")
	if err != nil {
		return
	}
	w := bufio.NewWriterSize(f, 64<<10)
	w.Write(h)
	w.Write(fences)
	for b := 0; b < nb; b++ {
		w.Write(encode(b))
	}
	err = w.Flush()
	if err == nil {
		err = f.Chmod(0o644) // as the cache's other files
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), c.idsPath(gen))
	}
	if err != nil {
		os.Remove(f.Name())
	}
}

// idRec is a record's id and number, 12 bytes (the id in two halves: a
// uint64 would pad it to 16, 4 MB more at a million facts).
type idRec struct {
	hi, lo, rec uint32
}

func newIDRec(id uint64, rec uint32) idRec { return idRec{uint32(id >> 32), uint32(id), rec} }

func (r idRec) id() uint64 { return uint64(r.hi)<<32 | uint64(r.lo) }

// sortSearch is sort.Search.
func sortSearch(n int, f func(int) bool) int {
	lo, hi := 0, n
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if !f(h) {
			lo = h + 1
		} else {
			hi = h
		}
	}
	return lo
}

// record reads record i of the index; false when it is damaged.
func (ix *mirrorIndex) record(i int) (indexRec, uint32, bool) {
	var b [indexRecord]byte
	if _, err := ix.idx.ReadAt(b[:], int64(i)*indexRecord); err != nil {
		return indexRec{}, 0, false
	}
	indexRecordsRead.Add(1)
	r, ok := getRec(b[:])
	return r, binary.LittleEndian.Uint32(b[32:]), ok
}
