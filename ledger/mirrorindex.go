package ledger

import (
	"bufio"
	"encoding/binary"
	"hash/crc32"
	"io"
	"os"
	"strings"
	"sync/atomic"

	"github.com/git-rally/git-rally/facts"
)

// The mirror's index, facts-<gen>.idx beside facts-<gen>.jsonl, has one
// record per mirror line, in the mirror's order:
//
//	 0  start  uint64  where the line starts in the mirror
//	 8  len    uint32  its length, newline included
//	12  id     uint64  the id's 16 hex digits (0: an id of another form)
//	20  kind   uint32  FNV-1a of the kind
//	24  tool   uint32  FNV-1a of the tool
//	28  sum    uint32  CRC-32 of the line
//	32  check  uint32  CRC-32 of the 32 bytes before
//
// so `log -n 10 --kind claim`, `show <id>` and any id lookup read the
// records (36 bytes a fact) and decode only the lines that match, never
// the whole mirror. A record is believed when its own check holds; a line
// when its sum and id are the record's. A missing, short or damaged index
// is not used (the readers fall back to the mirror), and the next
// rebuild writes it again.
const indexRecord = 36

// linesDecoded counts the mirror lines the tail and id readers decoded
// (for tests: what `log -n` and `show` cost must not grow with the
// ledger).
var linesDecoded atomic.Int64

// mirrorRead counts the bytes read from mirror files, for the same tests.
var mirrorRead atomic.Int64

type indexRec struct {
	start      int64
	n          uint32
	id         uint64
	kind, tool uint32
	sum        uint32
}

func fnv32(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

func (r indexRec) put(b []byte) {
	binary.LittleEndian.PutUint64(b[0:], uint64(r.start))
	binary.LittleEndian.PutUint32(b[8:], r.n)
	binary.LittleEndian.PutUint64(b[12:], r.id)
	binary.LittleEndian.PutUint32(b[20:], r.kind)
	binary.LittleEndian.PutUint32(b[24:], r.tool)
	binary.LittleEndian.PutUint32(b[28:], r.sum)
	binary.LittleEndian.PutUint32(b[32:], crc32.Checksum(b[:32], crcTable))
}

func getRec(b []byte) (indexRec, bool) {
	if binary.LittleEndian.Uint32(b[32:]) != crc32.Checksum(b[:32], crcTable) {
		return indexRec{}, false
	}
	return indexRec{
		start: int64(binary.LittleEndian.Uint64(b[0:])),
		n:     binary.LittleEndian.Uint32(b[8:]),
		id:    binary.LittleEndian.Uint64(b[12:]),
		kind:  binary.LittleEndian.Uint32(b[20:]),
		tool:  binary.LittleEndian.Uint32(b[24:]),
		sum:   binary.LittleEndian.Uint32(b[28:]),
	}, true
}

func recordOf(f *facts.Fact, line []byte, start int64) indexRec {
	id, _ := parseFactID(f.ID)
	return indexRec{start: start, n: uint32(len(line)), id: id, kind: fnv32(f.Kind), tool: fnv32(f.Tool),
		sum: crc32.Checksum(line, crcTable)}
}

// appendRecords adds the records of lines (the facts fs, in that order)
// written into the mirror at start.
func appendRecords(dst []byte, fs []*facts.Fact, start int64) []byte {
	var b [indexRecord]byte
	for _, f := range fs {
		recordOf(f, f.Raw, start).put(b[:])
		dst = append(dst, b[:]...)
		start += int64(len(f.Raw))
	}
	return dst
}

func (c *cache) indexPath(gen int) string {
	return strings.TrimSuffix(c.mirrorPath(gen), ".jsonl") + ".idx"
}

// appendIndex adds the records of fs to the index of generation gen,
// which holds the records of the first facts lines (up to start in the
// mirror). An index that does not hold exactly those is removed.
func (c *cache) appendIndex(gen, facts int, start int64, fs []*facts.Fact) {
	p := c.indexPath(gen)
	f, err := os.OpenFile(p, os.O_RDWR, 0o666)
	if err != nil {
		return
	}
	defer f.Close()
	at := int64(facts) * indexRecord
	ok := false
	if fi, err := f.Stat(); err == nil && fi.Size() >= at {
		if facts == 0 {
			ok = start == 0
		} else {
			var b [indexRecord]byte
			if _, err := f.ReadAt(b[:], at-indexRecord); err == nil {
				r, good := getRec(b[:])
				ok = good && r.start+int64(r.n) == start
			}
		}
	}
	if ok && f.Truncate(at) == nil {
		if _, err := f.WriteAt(appendRecords(nil, fs, start), at); err == nil {
			return
		}
	}
	f.Close()
	os.Remove(p)
}

// mirrorWriter writes a mirror generation and its index.
type mirrorWriter struct {
	cw  *crcWriter
	idx *bufio.Writer
	buf [indexRecord]byte
}

// add writes the line of f.
func (mw *mirrorWriter) add(line []byte, f *facts.Fact) {
	start := mw.cw.n
	mw.cw.Write(line)
	if mw.idx != nil {
		recordOf(f, line, start).put(mw.buf[:])
		mw.idx.Write(mw.buf[:])
	}
}

// mirrorIndex reads the index and the mirror of a saved state.
type mirrorIndex struct {
	idx, mirror *os.File
	n           int // records
}

// openIndex opens the index of st's mirror, when it is the saved state's
// and its last record ends where the mirror does.
func (c *cache) openIndex(st *facts.State) (*mirrorIndex, bool) {
	if c.saved == nil || c.saved.State == nil || c.saved.State.Head != st.Head || st.Facts == 0 {
		return nil, false
	}
	idx, err := os.Open(c.indexPath(c.saved.Gen))
	if err != nil {
		return nil, false
	}
	m, err := os.Open(c.mirrorPath(c.saved.Gen))
	if err != nil {
		idx.Close()
		return nil, false
	}
	ix := &mirrorIndex{idx: idx, mirror: m, n: st.Facts}
	var b [indexRecord]byte
	if _, err := idx.ReadAt(b[:], int64(ix.n-1)*indexRecord); err == nil {
		if r, ok := getRec(b[:]); ok && r.start+int64(r.n) == c.saved.MirrorLen {
			return ix, true
		}
	}
	ix.Close()
	return nil, false
}

func (ix *mirrorIndex) Close() {
	ix.idx.Close()
	ix.mirror.Close()
}

// scan calls fn with the records from the last to the first (backward)
// or the other way, until fn returns false. It reports false when a
// record is damaged or cannot be read.
func (ix *mirrorIndex) scan(backward bool, fn func(r indexRec) bool) bool {
	const per = 1820 // records a read: 64 KB
	buf := make([]byte, per*indexRecord)
	for done := 0; done < ix.n; {
		k := min(per, ix.n-done)
		first := done
		if backward {
			first = ix.n - done - k
		}
		b := buf[:k*indexRecord]
		if _, err := ix.idx.ReadAt(b, int64(first)*indexRecord); err != nil {
			return false
		}
		for j := 0; j < k; j++ {
			i := j
			if backward {
				i = k - 1 - j
			}
			r, ok := getRec(b[i*indexRecord:])
			if !ok {
				return false
			}
			if !fn(r) {
				return true
			}
		}
		done += k
	}
	return true
}

// fact reads and decodes the line of r; false when it is not what the
// record says.
func (ix *mirrorIndex) fact(r indexRec) (*facts.Fact, bool) {
	line := make([]byte, r.n)
	if _, err := ix.mirror.ReadAt(line, r.start); err != nil && err != io.EOF {
		return nil, false
	}
	mirrorRead.Add(int64(r.n))
	if crc32.Checksum(line, crcTable) != r.sum {
		return nil, false
	}
	linesDecoded.Add(1)
	f, err := facts.Parse(line)
	if err != nil {
		return nil, false
	}
	if id, _ := parseFactID(f.ID); id != r.id {
		return nil, false
	}
	return f, true
}

// indexTail returns the last n facts of kind and tool ("": any), newest
// last, reading the index backwards.
func (c *cache) indexTail(st *facts.State, n int, kind, tool string) ([]*facts.Fact, bool) {
	ix, ok := c.openIndex(st)
	if !ok {
		return nil, false
	}
	defer ix.Close()
	kh, th := fnv32(kind), fnv32(tool)
	var out []*facts.Fact
	good := true
	ok = ix.scan(true, func(r indexRec) bool {
		if (kind != "" && r.kind != kh) || (tool != "" && r.tool != th) {
			return true
		}
		f, ok := ix.fact(r)
		if !ok {
			good = false
			return false
		}
		if (kind == "" || f.Kind == kind) && (tool == "" || f.Tool == tool) {
			out = append(out, f)
		}
		return len(out) < n
	})
	if !ok || !good {
		return nil, false
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, true
}

// indexPrefix returns the facts whose id starts with prefix (f_ and hex
// digits), decoding only the lines whose id the index says matches.
func (c *cache) indexPrefix(st *facts.State, prefix string) ([]*facts.Fact, bool) {
	ix, ok := c.openIndex(st)
	if !ok {
		return nil, false
	}
	defer ix.Close()
	digits := strings.TrimPrefix(prefix, "f_")
	want, ok := lowerHex(digits)
	if !ok {
		return nil, true // longer than any id, or not an id's digits
	}
	shift := uint(4 * (16 - len(digits)))
	var found []*facts.Fact
	good := true
	match := func(r indexRec) bool {
		f, ok := ix.fact(r)
		if !ok {
			good = false
			return false
		}
		if strings.HasPrefix(f.ID, prefix) {
			found = append(found, f)
		}
		return true
	}
	gen := c.saved.Gen
	if t, ok := c.openIdsTable(gen, ix); ok {
		recs, ok := t.lookup(want, shift)
		covered := t.covered
		t.Close()
		if !ok {
			goto scan // a damaged block: scanned, and the table written again
		}
		// The records the table names, then those appended since.
		for _, i := range recs {
			r, _, ok := ix.record(i)
			if !ok || r.id>>shift != want && r.id != 0 || !match(r) {
				return nil, false
			}
		}
		for i := covered; i < ix.n; i++ {
			r, _, ok := ix.record(i)
			if !ok {
				return nil, false
			}
			if (r.id>>shift == want || r.id == 0) && !match(r) {
				return nil, false
			}
		}
		return found, true
	}
scan:
	// Every record, and the table for the next lookup.
	var ids []idRec
	if ix.n >= idsTableAt {
		ids = make([]idRec, 0, ix.n)
	}
	ok = ix.scan(false, func(r indexRec) bool {
		indexRecordsRead.Add(1)
		if ids != nil {
			ids = append(ids, newIDRec(r.id, uint32(len(ids))))
		}
		// An id of another form is recorded as 0: look at it too.
		if r.id>>shift != want && r.id != 0 {
			return true
		}
		return match(r)
	})
	if !ok || !good {
		return nil, false
	}
	if ids != nil && len(ids) == ix.n {
		if _, check, ok := ix.record(ix.n - 1); ok {
			c.writeIdsTable(gen, ids, check)
		}
	}
	return found, true
}
