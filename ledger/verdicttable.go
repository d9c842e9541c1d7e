package ledger

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/git-rally/git-rally/refs"
)

// The verdict table, verdicts/table beside sigs, holds the records of
// sigs' first bytes sorted by fact id, as a blockTable (the ids table's
// blocks, fences and CRCs), so a process that asks a few verdicts (`log
// -n 10`, `show`) reads the header, the fences and a block or two instead
// of reading and sorting every record (24 bytes a fact: 24 MB and 0.7-1.2
// s of CPU at a million facts for `log -n 10` or `show` with signing
// configured). The header (48 bytes): "rvt1", the entries, the entries a
// block, the blocks, the CRC-32 of the fences, the length and CRC-32 of
// the extra, the CRC-32 of the last 4 KiB of sigs it covers, the bytes of
// sigs it covers, the CRC-32 of all that. An entry (24 bytes): the id's
// number, the time, the key, the state. The extra is the lines of sigs it
// does not list as entries (the keys, the records of ids of another
// form), as sigs has them. A reader reads the records sigs holds beyond
// the table as before; a table whose header, fences, size, extra or the
// sigs it is bound to do not hold is not used (sigs is read whole), and a
// block that does not hold is read again from sigs: either way it is
// written again, as when the records beyond it pass verdictTail bytes.
const (
	verdictEntry  = 24
	verdictHeader = 48
	verdictBind   = 4096
)

var (
	// verdictBlock is the entries a block holds (48 KB).
	verdictBlock = 2048
	// verdictTableAt is the number of records from which a table is kept.
	verdictTableAt = 1 << 14
	// verdictTail is how many bytes of sigs beyond the table a reader
	// reads before the table is written again (about 10k records).
	verdictTail int64 = 256 << 10
	// verdictRead counts the bytes of sigs and of the table read (tests).
	verdictRead atomic.Int64
)

func (vc *verdictCache) tablePath() string { return filepath.Join(vc.dir, "table") }

// verdictTable is an open table and the blocks it has read.
type verdictTable struct {
	*blockTable
	covers int64 // the bytes of sigs it holds
	held   map[int][]byte
}

// openVerdictTable opens the table at path bound to sigs (of which the
// head records sigsLen bytes) and returns its extra; false when it is
// missing or does not hold.
func openVerdictTable(path string, sigs *os.File, sigsLen int64) (*verdictTable, []byte, bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, false
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
		}
	}()
	var h [verdictHeader]byte
	if _, err := f.ReadAt(h[:], 0); err != nil || string(h[:4]) != "rvt1" ||
		crc32.Checksum(h[:40], crcTable) != binary.LittleEndian.Uint32(h[40:]) {
		return nil, nil, false
	}
	verdictRead.Add(verdictHeader)
	u32 := func(i int) int { return int(binary.LittleEndian.Uint32(h[i:])) }
	covers := int64(binary.LittleEndian.Uint64(h[32:]))
	if covers <= 0 || covers > sigsLen {
		return nil, nil, false
	}
	// Bound to sigs: the last bytes it covers are those it saw.
	bind := make([]byte, min(covers, verdictBind))
	if _, err := sigs.ReadAt(bind, covers-int64(len(bind))); err != nil || crc32.Checksum(bind, crcTable) != uint32(u32(28)) {
		return nil, nil, false
	}
	verdictRead.Add(int64(len(bind)))
	bt, ok2 := openBlockTable(f, verdictHeader, u32(4), u32(8), verdictEntry, u32(12), uint32(u32(16)), int64(u32(20)), &verdictRead)
	if !ok2 {
		return nil, nil, false
	}
	extra := make([]byte, u32(20))
	if _, err := f.ReadAt(extra, bt.end()); err != nil || crc32.Checksum(extra, crcTable) != uint32(u32(24)) {
		return nil, nil, false
	}
	verdictRead.Add(int64(len(extra)))
	ok = true
	return &verdictTable{blockTable: bt, covers: covers, held: map[int][]byte{}}, extra, true
}

// find returns the records of the fact whose id's number is n, in the
// order sigs has them; false when a block it reads does not hold. A block
// read is kept: a process that asks every fact's verdict (doctor, a view
// under rally.requireSigned) reads and checks each block once.
func (t *verdictTable) find(n uint64) ([]sigEntry, bool) {
	first, end := t.span(n, n)
	var out []sigEntry
	for b := first; b < end; b++ {
		e, ok := t.held[b]
		if !ok {
			if e, ok = t.block(b); !ok {
				return nil, false
			}
			t.held[b] = e
		}
		// Sorted within the block too: from the first entry not below n.
		key := func(i int) uint64 { return binary.LittleEndian.Uint64(e[i*verdictEntry:]) }
		for i := sortSearch(len(e)/verdictEntry, func(i int) bool { return key(i) >= n }) * verdictEntry; i < len(e); i += verdictEntry {
			if binary.LittleEndian.Uint64(e[i:]) != n {
				break
			}
			out = append(out, sigEntry{n, sigRecord{
				at:    int64(binary.LittleEndian.Uint64(e[i+8:])),
				key:   int32(binary.LittleEndian.Uint32(e[i+16:])),
				state: e[i+20],
			}})
		}
	}
	return out, true
}

// keepTable writes the table again when the records beyond it have
// passed verdictTail bytes (or there is none and there are enough
// records): after an update, under the verdicts lock.
func (vc *verdictCache) keepTable() {
	if vc.tab != nil && vc.sigsLen-vc.tab.covers > verdictTail || vc.tab == nil && len(vc.ents) >= verdictTableAt {
		vc.load(true)
	}
}

// writeTable writes the table of what vc holds, all of sigs' first
// vc.sigsLen bytes (no table open), bound to sigs. Errors leave none.
func (vc *verdictCache) writeTable(sigs *os.File) {
	var extra []byte
	for i, k := range vc.keys {
		extra = fmt.Appendf(extra, "k %d %s", i, refs.SSH.KeyLine(k))
	}
	for id, recs := range vc.other {
		for _, r := range recs {
			extra = appendSigLine(extra, []byte(id), r.sigRecord)
		}
	}
	bind := make([]byte, min(vc.sigsLen, verdictBind))
	if _, err := sigs.ReadAt(bind, vc.sigsLen-int64(len(bind))); err != nil {
		return
	}
	put := func(e []byte, i int) []byte {
		r := vc.ents[i]
		e = binary.LittleEndian.AppendUint64(e, r.id)
		e = binary.LittleEndian.AppendUint64(e, uint64(r.at))
		e = binary.LittleEndian.AppendUint32(e, uint32(r.key))
		return append(e, r.state, 0, 0, 0)
	}
	header := func(nb int, fencesCRC uint32) []byte {
		h := make([]byte, verdictHeader)
		copy(h, "rvt1")
		binary.LittleEndian.PutUint32(h[4:], uint32(len(vc.ents)))
		binary.LittleEndian.PutUint32(h[8:], uint32(verdictBlock))
		binary.LittleEndian.PutUint32(h[12:], uint32(nb))
		binary.LittleEndian.PutUint32(h[16:], fencesCRC)
		binary.LittleEndian.PutUint32(h[20:], uint32(len(extra)))
		binary.LittleEndian.PutUint32(h[24:], crc32.Checksum(extra, crcTable))
		binary.LittleEndian.PutUint32(h[28:], crc32.Checksum(bind, crcTable))
		binary.LittleEndian.PutUint64(h[32:], uint64(vc.sigsLen))
		binary.LittleEndian.PutUint32(h[40:], crc32.Checksum(h[:40], crcTable))
		return h
	}
	writeBlockTable(vc.tablePath(), len(vc.ents), verdictBlock, verdictEntry, put, header, extra)
}

// appendSigLine appends the line of sigs that records rec for id.
func appendSigLine(b, id []byte, rec sigRecord) []byte {
	b = append(append(b, "f "...), id...)
	if rec.state == 'g' {
		return fmt.Appendf(b, " g %d %d\n", rec.key, rec.at)
	}
	return append(b, ' ', rec.state, '\n')
}
