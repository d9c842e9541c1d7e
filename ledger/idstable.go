package ledger

import (
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
// first records by id: a 16-byte header (rids, the records it covers,
// the CRC-32 of its entries, the check of the last record it covers),
// then per record its id (0 for an id of another form) and its number,
// 12 bytes, in id order. An id lookup (`show <id>`) reads the table,
// finds the ids with the prefix by binary search, and reads those
// records and the records appended since the table; the whole index
// (36 bytes a fact, each record's CRC checked) was 40 ms of CPU at a
// million facts against a bar of 30 ms for `show`. The first lookup of
// a mirror generation of idsTableAt facts or more scans the index as
// before and writes the table. A table whose CRC, size or last record do
// not hold is not used (the index is scanned) and is written again.
const idsEntry = 12

// idsTableAt is the number of facts from which a lookup keeps a table.
var idsTableAt = 1 << 14

// indexRecordsRead counts the index records id lookups read (tests).
var indexRecordsRead atomic.Int64

func (c *cache) idsPath(gen int) string {
	return filepath.Join(c.dir, fmt.Sprintf("facts-%d.ids", gen))
}

// idsTable reads the table of generation gen for ix, nil when it is
// missing or does not hold.
func (c *cache) idsTable(gen int, ix *mirrorIndex) (entries []byte, covered int) {
	b, err := os.ReadFile(c.idsPath(gen))
	if err != nil || len(b) < 16 || string(b[:4]) != "rids" {
		return nil, 0
	}
	covered = int(binary.LittleEndian.Uint32(b[4:]))
	entries = b[16:]
	if covered == 0 || covered > ix.n || len(entries) != covered*idsEntry ||
		crc32.Checksum(entries, crcTable) != binary.LittleEndian.Uint32(b[8:]) {
		return nil, 0
	}
	// Bound to the index: the last record it covers is the one it saw.
	var r [indexRecord]byte
	if _, err := ix.idx.ReadAt(r[:], int64(covered-1)*indexRecord); err != nil ||
		binary.LittleEndian.Uint32(r[32:]) != binary.LittleEndian.Uint32(b[12:]) {
		return nil, 0
	}
	return entries, covered
}

// writeIdsTable writes the table of the first len(ids) records of ix;
// lastCheck is the check of the last one. Errors leave no table.
func (c *cache) writeIdsTable(gen int, ids []idRec, lastCheck uint32) {
	slices.SortFunc(ids, func(a, b idRec) int { return cmp.Or(cmp.Compare(a.id, b.id), cmp.Compare(a.rec, b.rec)) })
	b := make([]byte, 16+len(ids)*idsEntry)
	copy(b, "rids")
	e := b[16:]
	for i, r := range ids {
		binary.LittleEndian.PutUint64(e[i*idsEntry:], r.id)
		binary.LittleEndian.PutUint32(e[i*idsEntry+8:], r.rec)
	}
	binary.LittleEndian.PutUint32(b[4:], uint32(len(ids)))
	binary.LittleEndian.PutUint32(b[8:], crc32.Checksum(e, crcTable))
	binary.LittleEndian.PutUint32(b[12:], lastCheck)
	f, err := os.CreateTemp(c.dir, filepath.Base(c.idsPath(gen))+".*")
	if err != nil {
		return
	}
	_, err = f.Write(b)
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

type idRec struct {
	id  uint64
	rec uint32
}

// lookupTable returns the numbers of the records the table lists with
// an id whose digits >> shift are want, or 0 (an id of another form), in
// record order.
func lookupTable(entries []byte, want uint64, shift uint) []int {
	n := len(entries) / idsEntry
	id := func(i int) uint64 { return binary.LittleEndian.Uint64(entries[i*idsEntry:]) }
	rec := func(i int) int { return int(binary.LittleEndian.Uint32(entries[i*idsEntry+8:])) }
	var out []int
	for i := 0; i < n && id(i) == 0; i++ {
		out = append(out, rec(i))
	}
	i := sortSearch(n, func(i int) bool { return id(i)>>shift >= want })
	for ; i < n && id(i)>>shift == want; i++ {
		if id(i) != 0 {
			out = append(out, rec(i))
		}
	}
	slices.Sort(out)
	return out
}

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
