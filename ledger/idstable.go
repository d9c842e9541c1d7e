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
	*blockTable
	covered int // the index records it lists
}

// openIdsTable opens the table of generation gen for ix; false when it
// is missing or its header, fences or size do not hold.
func (c *cache) openIdsTable(gen int, ix *mirrorIndex) (*idsTable, bool) {
	f, err := os.Open(c.idsPath(gen))
	if err != nil {
		return nil, false
	}
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
	covered := int(binary.LittleEndian.Uint32(h[4:]))
	if covered > ix.n {
		return nil, false
	}
	bt, ok2 := openBlockTable(f, idsHeader, covered, int(binary.LittleEndian.Uint32(h[8:])), idsEntry,
		int(binary.LittleEndian.Uint32(h[16:])), binary.LittleEndian.Uint32(h[20:]), 0, &idsTableRead)
	if !ok2 {
		return nil, false
	}
	// Bound to the index: the last record it covers is the one it saw.
	var r [indexRecord]byte
	if _, err := ix.idx.ReadAt(r[:], int64(covered-1)*indexRecord); err != nil ||
		binary.LittleEndian.Uint32(r[32:]) != binary.LittleEndian.Uint32(h[12:]) {
		return nil, false
	}
	ok = true
	return &idsTable{bt, covered}, true
}

// lookup returns the numbers of the records the table lists with an id
// whose digits >> shift are want, or 0 (an id of another form), in record
// order; false when a block it reads does not hold.
func (t *idsTable) lookup(want uint64, shift uint) ([]int, bool) {
	nb := t.blocks()
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
	first, end := t.span(lo, hi)
	for b := first; b < end; b++ {
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
	put := func(e []byte, i int) []byte {
		e = binary.LittleEndian.AppendUint64(e, ids[i].id())
		return binary.LittleEndian.AppendUint32(e, ids[i].rec)
	}
	header := func(nb int, fencesCRC uint32) []byte {
		h := make([]byte, idsHeader)
		copy(h, "rid2")
		binary.LittleEndian.PutUint32(h[4:], uint32(len(ids)))
		binary.LittleEndian.PutUint32(h[8:], uint32(idsBlock))
		binary.LittleEndian.PutUint32(h[12:], lastCheck)
		binary.LittleEndian.PutUint32(h[16:], uint32(nb))
		binary.LittleEndian.PutUint32(h[20:], fencesCRC)
		return h
	}
	writeBlockTable(c.idsPath(gen), len(ids), idsBlock, idsEntry, put, header, nil)
}

// blockTable is a table on disk of fixed-width entries sorted by the
// uint64 each starts with, in blocks each with its own CRC (the ids table,
// the verdict table): a header of the table's own, the fences (per block
// its first key and the CRC-32 of its entries, 12 bytes), the entries,
// then what else the table keeps (extra). A lookup reads the fences and
// the blocks that may hold its key, each checked as it is read.
type blockTable struct {
	f      *os.File
	at     int64 // where the fences start
	n      int   // entries
	per    int   // entries a block
	width  int   // bytes an entry
	fences []byte
	read   *atomic.Int64 // bytes read (tests)
}

const fenceEntry = 12

// openBlockTable reads and checks the fences of a table of n entries at
// offset at of f; false when the counts, the size or the fences' CRC do
// not hold.
func openBlockTable(f *os.File, at int64, n, per, width, nb int, fencesCRC uint32, extra int64, read *atomic.Int64) (*blockTable, bool) {
	if n <= 0 || per <= 0 || nb != (n+per-1)/per {
		return nil, false
	}
	fi, err := f.Stat()
	if err != nil || fi.Size() != at+int64(nb*fenceEntry)+int64(n)*int64(width)+extra {
		return nil, false
	}
	t := &blockTable{f: f, at: at, n: n, per: per, width: width, fences: make([]byte, nb*fenceEntry), read: read}
	if _, err := f.ReadAt(t.fences, at); err != nil || crc32.Checksum(t.fences, crcTable) != fencesCRC {
		return nil, false
	}
	read.Add(int64(len(t.fences)))
	return t, true
}

func (t *blockTable) Close() { t.f.Close() }

// blocks is the number of blocks.
func (t *blockTable) blocks() int { return len(t.fences) / fenceEntry }

// fence returns block b's first key.
func (t *blockTable) fence(b int) uint64 { return binary.LittleEndian.Uint64(t.fences[b*fenceEntry:]) }

// end is the offset just past the entries (where extra starts).
func (t *blockTable) end() int64 { return t.at + int64(len(t.fences)) + int64(t.n)*int64(t.width) }

// block reads block b's entries, checked against its CRC.
func (t *blockTable) block(b int) ([]byte, bool) {
	n := min(t.per, t.n-b*t.per)
	e := make([]byte, n*t.width)
	off := t.at + int64(len(t.fences)) + int64(b*t.per)*int64(t.width)
	if _, err := t.f.ReadAt(e, off); err != nil || crc32.Checksum(e, crcTable) != binary.LittleEndian.Uint32(t.fences[b*fenceEntry+8:]) {
		return nil, false
	}
	t.read.Add(int64(len(e)))
	return e, true
}

// span returns the blocks [first, end) that may hold keys from lo to hi:
// the last block starting below lo (its end may hold lo), and on while
// they start within the range.
func (t *blockTable) span(lo, hi uint64) (int, int) {
	nb := t.blocks()
	first := max(sortSearch(nb, func(b int) bool { return t.fence(b) >= lo })-1, 0)
	end := first + 1
	for end < nb && t.fence(end) <= hi {
		end++
	}
	return first, min(end, nb)
}

// writeBlockTable writes at path a table of n entries, put appending entry
// i (in key order), per a block: header(blocks, the fences' CRC), the
// fences, the entries, then extra. Written aside and renamed; errors leave
// no table.
func writeBlockTable(path string, n, per, width int, put func([]byte, int) []byte, header func(int, uint32) []byte, extra []byte) error {
	nb := (n + per - 1) / per
	block := make([]byte, 0, per*width)
	encode := func(b int) []byte {
		e := block[:0]
		for i := b * per; i < min(n, (b+1)*per); i++ {
			e = put(e, i)
		}
		return e
	}
	fences := make([]byte, 0, nb*fenceEntry)
	for b := 0; b < nb; b++ {
		e := encode(b)
		fences = binary.LittleEndian.AppendUint64(fences, binary.LittleEndian.Uint64(e))
		fences = binary.LittleEndian.AppendUint32(fences, crc32.Checksum(e, crcTable))
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 64<<10)
	w.Write(header(nb, crc32.Checksum(fences, crcTable)))
	w.Write(fences)
	for b := 0; b < nb; b++ {
		w.Write(encode(b))
	}
	w.Write(extra)
	err = w.Flush()
	if err == nil {
		err = f.Chmod(0o644) // as the cache's other files
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
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
