package refs

import (
	"bytes"
	"encoding/binary"
	"os"
	"sync"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
)

// packIndex answers lookups in a pack's version 2 index as git does: from
// the file, in place. Opening reads the header and the fan-out table (1 KB);
// an id is found by a binary search of the names in its fan-out bucket
// (a 20-byte read a step: 13 at two million objects), then its offset in
// the 32-bit table (and the 64-bit one past 2 GB). Nothing else is read or
// held. Reading the index whole (a million-fact ledger's pack: 2M objects,
// a 58 MB file, and a 16 MB offset table with its sort's copy) made the
// first warm claim after a `git gc` 127 ms and 70 MB, where the loose
// head it read before the gc cost nothing. The id at an offset (go-git
// asks it of a delta's base) is found by a scan of the 32-bit offsets, 4
// bytes an object read through a small buffer.
//
// A reader that reads many objects (a cold read, sync, doctor) would pay a
// search or a scan each: after lazyLookups lookups or lazyScans scans the
// index is read whole (fullIndex) and answers from memory from then on.
type packIndex struct {
	mu     sync.Mutex
	path   string
	f      *os.File // nil once closed; opened again when needed
	n      uint64   // objects
	large  uint64   // entries of the 64-bit offset table
	fanout [256]uint32
	uses   int // lookups answered from the file
	scans  int // offset scans made
	full   *fullIndex
	err    error // of reading it whole
}

const (
	idxHeader = 8 + 256*4
	// lazyLookups and lazyScans bound the lookups answered from the file
	// before the index is read whole. A lookup costs ~13 reads of 20
	// bytes, a scan reads 4 bytes an object; reading the whole index
	// costs 28 bytes an object read and 16 held.
	lazyLookups = 1024
	lazyScans   = 8
	scanBuf     = 16 << 10
)

// idxReadBytes counts the bytes read from pack index files (tests).
var idxReadBytes atomic.Int64

// openPackIndex reads the index's header and fan-out and checks what git
// checks when it opens one: magic, version, a fan-out that never
// decreases, a size that fits the count with at most one large offset an
// object. Large offsets are checked against the table when read.
func openPackIndex(path string) (*packIndex, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	x := &packIndex{path: path, f: f}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	var hdr [idxHeader]byte
	if err := x.readAt(hdr[:], 0); err != nil {
		f.Close()
		return nil, err
	}
	if string(hdr[:4]) != "\377tOc" {
		f.Close()
		return nil, idxfile.ErrMalformedIdxFile
	}
	if v := binary.BigEndian.Uint32(hdr[4:]); v != idxfile.VersionSupported {
		f.Close()
		return nil, idxfile.ErrUnsupportedVersion
	}
	for k := range 256 {
		x.fanout[k] = binary.BigEndian.Uint32(hdr[8+4*k:])
		if k > 0 && x.fanout[k] < x.fanout[k-1] {
			f.Close()
			return nil, idxfile.ErrMalformedIdxFile
		}
	}
	x.n = uint64(x.fanout[255])
	least := uint64(idxHeader) + 28*x.n + 40
	size := uint64(fi.Size())
	if size < least || (size-least)%8 != 0 || (size-least)/8 > x.n {
		f.Close()
		return nil, idxfile.ErrMalformedIdxFile
	}
	x.large = (size - least) / 8
	return x, nil
}

// readAt fills b from the index at off; a short read is a malformed index.
func (x *packIndex) readAt(b []byte, off uint64) error {
	if x.f == nil {
		f, err := os.Open(x.path)
		if err != nil {
			return err
		}
		x.f = f
	}
	n, err := x.f.ReadAt(b, int64(off))
	idxReadBytes.Add(int64(n))
	if n == len(b) {
		return nil
	}
	if err == nil {
		err = idxfile.ErrMalformedIdxFile
	}
	return err
}

func (x *packIndex) close() {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.f != nil {
		x.f.Close()
		x.f = nil
	}
}

// whole returns the index read whole once the lookups passed the bounds,
// else nil; the caller holds mu.
func (x *packIndex) whole(scan bool) (*fullIndex, error) {
	if x.full != nil || x.err != nil {
		return x.full, x.err
	}
	if scan {
		x.scans++
	} else {
		x.uses++
	}
	if x.uses <= lazyLookups && x.scans <= lazyScans {
		return nil, nil
	}
	return x.load()
}

// load reads the index whole (parseIdx); the caller holds mu.
func (x *packIndex) load() (*fullIndex, error) {
	if x.full != nil || x.err != nil {
		return x.full, x.err
	}
	b, err := os.ReadFile(x.path)
	idxReadBytes.Add(int64(len(b)))
	if err == nil {
		var idx *idxfile.MemoryIndex
		if idx, err = parseIdx(b); err == nil {
			x.full = &fullIndex{MemoryIndex: idx}
		}
	}
	x.err = err
	if x.f != nil {
		x.f.Close()
		x.f = nil
	}
	return x.full, x.err
}

// find returns the position of h in the index's name order.
func (x *packIndex) find(h plumbing.Hash) (uint64, bool, error) {
	lo := uint64(0)
	if h[0] > 0 {
		lo = uint64(x.fanout[h[0]-1])
	}
	hi := uint64(x.fanout[h[0]])
	var name [20]byte
	for lo < hi {
		mid := lo + (hi-lo)/2
		if err := x.readAt(name[:], idxHeader+20*mid); err != nil {
			return 0, false, err
		}
		switch c := bytes.Compare(name[:], h[:]); {
		case c == 0:
			return mid, true, nil
		case c < 0:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return 0, false, nil
}

// offset returns the pack offset an entry of the 32-bit table gives.
func (x *packIndex) offset(e uint32) (int64, error) {
	if e&(1<<31) == 0 {
		return int64(e), nil
	}
	k := uint64(e &^ (1 << 31))
	if k >= x.large {
		return 0, idxfile.ErrMalformedIdxFile
	}
	var b [8]byte
	if err := x.readAt(b[:], idxHeader+28*x.n+8*k); err != nil {
		return 0, err
	}
	off := binary.BigEndian.Uint64(b[:])
	if off >= 1<<63 {
		return 0, idxfile.ErrMalformedIdxFile
	}
	return int64(off), nil
}

func (x *packIndex) entry32(table, pos uint64) (uint32, error) {
	var b [4]byte
	if err := x.readAt(b[:], idxHeader+table*x.n+4*pos); err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint32(b[:]), nil
}

func (x *packIndex) Contains(h plumbing.Hash) (bool, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if full, err := x.whole(false); full != nil || err != nil {
		if err != nil {
			return false, err
		}
		return full.Contains(h)
	}
	_, ok, err := x.find(h)
	return ok, err
}

func (x *packIndex) FindOffset(h plumbing.Hash) (int64, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if full, err := x.whole(false); full != nil || err != nil {
		if err != nil {
			return 0, err
		}
		return full.FindOffset(h)
	}
	pos, ok, err := x.find(h)
	if err != nil || !ok {
		return 0, cmpErr(err, plumbing.ErrObjectNotFound)
	}
	e, err := x.entry32(24, pos)
	if err != nil {
		return 0, err
	}
	return x.offset(e)
}

func (x *packIndex) FindCRC32(h plumbing.Hash) (uint32, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if full, err := x.whole(false); full != nil || err != nil {
		if err != nil {
			return 0, err
		}
		return full.FindCRC32(h)
	}
	pos, ok, err := x.find(h)
	if err != nil || !ok {
		return 0, cmpErr(err, plumbing.ErrObjectNotFound)
	}
	return x.entry32(20, pos)
}

// FindHash scans the 32-bit offsets for o, a buffer at a time.
func (x *packIndex) FindHash(o int64) (plumbing.Hash, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if full, err := x.whole(true); full != nil || err != nil {
		if err != nil {
			return plumbing.ZeroHash, err
		}
		return full.FindHash(o)
	}
	if o < 0 {
		return plumbing.ZeroHash, plumbing.ErrObjectNotFound
	}
	buf := make([]byte, scanBuf)
	base := uint64(idxHeader) + 24*x.n
	for pos := uint64(0); pos < x.n; {
		k := min(x.n-pos, scanBuf/4)
		b := buf[:4*k]
		if err := x.readAt(b, base+4*pos); err != nil {
			return plumbing.ZeroHash, err
		}
		for i := uint64(0); i < k; i++ {
			e := binary.BigEndian.Uint32(b[4*i:])
			if e&(1<<31) == 0 && int64(e) != o {
				continue
			}
			off, err := x.offset(e)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			if off == o {
				var h plumbing.Hash
				if err := x.readAt(h[:], idxHeader+20*(pos+i)); err != nil {
					return plumbing.ZeroHash, err
				}
				return h, nil
			}
		}
		pos += k
	}
	return plumbing.ZeroHash, plumbing.ErrObjectNotFound
}

func (x *packIndex) Count() (int64, error) { return int64(x.n), nil }

// Entries and EntriesByOffset read every entry: the index is read whole.
func (x *packIndex) Entries() (idxfile.EntryIter, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	full, err := x.load()
	if err != nil {
		return nil, err
	}
	return full.Entries()
}

func (x *packIndex) EntriesByOffset() (idxfile.EntryIter, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	full, err := x.load()
	if err != nil {
		return nil, err
	}
	return full.EntriesByOffset()
}

// cmpErr returns err, or otherwise when err is nil.
func cmpErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}
