package refs

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/objfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// objectDB reads the objects of one object directory and its alternates:
// loose objects with go-git's objfile reader, packed ones with its idxfile
// and packfile packages. It stands in for go-git's storage/filesystem,
// which also links go-git's config (gcfg, encoding/gob, a URL parser
// whose regexps compile at start-up) for a repository API rally does not
// use: a quarter of a millisecond of package init in every process.
type objectDB struct {
	dir   string // the objects directory
	cache cache.Object
	packs []*packHandle // in objects/pack order; nil until first needed
	known bool          // packs was listed
	alts  []*objectDB   // nil until first needed
	altOK bool          // alts was read
	depth int           // alternates of alternates, bounded as git bounds them
}

type packHandle struct {
	name string // the .idx file's base name
	idx  *packIndex
	f    *os.File
	pf   *packfile.Packfile
	bad  bool // the pack could not be opened; skipped until reindex
}

func newObjectDB(dir string, c cache.Object, depth int) *objectDB {
	return &objectDB{dir: dir, cache: c, depth: depth}
}

// object returns the object h of type t (plumbing.AnyObject for any),
// or plumbing.ErrObjectNotFound.
func (db *objectDB) object(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	obj, err := db.loose(h)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		obj, err = db.packed(h)
	}
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		for _, a := range db.alternates() {
			if obj, err = a.object(t, h); err == nil {
				break
			}
		}
	}
	if err != nil {
		return nil, err
	}
	if t != plumbing.AnyObject && obj.Type() != t {
		return nil, plumbing.ErrObjectNotFound
	}
	return obj, nil
}

// has reports whether the object is here, without reading it.
func (db *objectDB) has(h plumbing.Hash) bool {
	hex := h.String()
	if _, err := os.Lstat(filepath.Join(db.dir, hex[:2], hex[2:])); err == nil {
		return true
	}
	for _, p := range db.packList() {
		if p.index(db.dir) == nil {
			continue
		}
		if ok, _ := p.idx.Contains(h); ok {
			return true
		}
	}
	for _, a := range db.alternates() {
		if a.has(h) {
			return true
		}
	}
	return false
}

func (db *objectDB) loose(h plumbing.Hash) (plumbing.EncodedObject, error) {
	hex := h.String()
	f, err := os.Open(filepath.Join(db.dir, hex[:2], hex[2:]))
	if err != nil {
		if os.IsNotExist(err) {
			return nil, plumbing.ErrObjectNotFound
		}
		return nil, err
	}
	defer f.Close()
	r, err := objfile.NewReader(f)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	t, size, err := r.Header()
	if err != nil {
		return nil, err
	}
	// The header declares the size: nothing past the cap is inflated.
	if lim := limitOf(t); size > lim {
		return nil, &TooLargeError{Hash(h), size, lim}
	}
	obj := &plumbing.MemoryObject{}
	obj.SetType(t)
	obj.SetSize(size)
	w, err := obj.Writer()
	if err != nil {
		return nil, err
	}
	n, err := io.Copy(w, io.LimitReader(r, size))
	InflatedBytes.Add(n)
	if err != nil {
		return nil, err
	}
	return obj, nil
}

func (db *objectDB) packed(h plumbing.Hash) (plumbing.EncodedObject, error) {
	for _, p := range db.packList() {
		if p.index(db.dir) == nil {
			continue
		}
		off, err := p.idx.FindOffset(h)
		if err != nil {
			continue
		}
		if p.pf == nil {
			f, err := os.Open(filepath.Join(db.dir, "pack", strings.TrimSuffix(p.name, ".idx")+".pack"))
			if err != nil {
				// Removed by a concurrent repack after its objects
				// moved to a newer pack: the caller lists again.
				continue
			}
			p.f = f
			p.pf = packfile.NewPackfileWithCache(p.idx, nil, osFile{f}, db.cache, 0)
		}
		if err := p.checkPacked(h, off); err != nil {
			return nil, err
		}
		// By id, not by offset: GetByOffset asks the index the id at
		// the offset, which the index answers only by a scan or by
		// reading itself whole.
		obj, err := p.pf.Get(h)
		if err != nil {
			return nil, err
		}
		InflatedBytes.Add(obj.Size())
		return obj, nil
	}
	return nil, plumbing.ErrObjectNotFound
}

// packList lists objects/pack/*.idx once; reindex lists again.
func (db *objectDB) packList() []*packHandle {
	if db.known {
		return db.packs
	}
	db.known = true
	old := make(map[string]*packHandle, len(db.packs))
	for _, p := range db.packs {
		old[p.name] = p
	}
	ents, _ := os.ReadDir(filepath.Join(db.dir, "pack"))
	db.packs = db.packs[:0]
	for _, e := range ents {
		n := e.Name()
		if !strings.HasPrefix(n, "pack-") || !strings.HasSuffix(n, ".idx") {
			continue
		}
		if p, ok := old[n]; ok && !p.bad {
			db.packs = append(db.packs, p)
			delete(old, n)
			continue
		}
		db.packs = append(db.packs, &packHandle{name: n})
	}
	for _, p := range old {
		p.close()
	}
	return db.packs
}

// fullIndex is go-git's index of a pack, read whole, whose FindHash (the
// id of the object at an offset: go-git asks it of every delta's base it
// reads from the pack) looks in a table of the offsets in order, 8 bytes
// an object, made on first use. go-git's own makes a map of every offset,
// 80 bytes an object: reading one object of a million-object pack cost 80
// MB of heap (doctor at 1M facts: 292 MB). A packIndex reads it whole only
// once it has answered many lookups (see packIndex).
type fullIndex struct {
	*idxfile.MemoryIndex
	once sync.Once
	// byOff holds offset<<posBits | position for every object, by
	// offset; position is the object's place in the index's name order.
	byOff   []uint64
	posBits uint
	err     error
}

// offsetTables counts the offset tables made (tests).
var offsetTables atomic.Int64

func (x *fullIndex) FindHash(o int64) (plumbing.Hash, error) {
	x.once.Do(x.buildOffsets)
	if x.err != nil {
		return plumbing.ZeroHash, x.err
	}
	if o < 0 {
		return plumbing.ZeroHash, plumbing.ErrObjectNotFound
	}
	off := uint64(o)
	i := sort.Search(len(x.byOff), func(i int) bool { return x.byOff[i]>>x.posBits >= off })
	if i == len(x.byOff) || x.byOff[i]>>x.posBits != off {
		return plumbing.ZeroHash, plumbing.ErrObjectNotFound
	}
	pos := uint32(x.byOff[i] & (1<<x.posBits - 1))
	// The fan-out bucket holding that position: the first whose
	// cumulative count exceeds it (buildOffsets checked the bounds).
	first := sort.Search(len(x.Fanout), func(f int) bool { return x.Fanout[f] > pos })
	second := pos
	if first > 0 {
		second -= x.Fanout[first-1]
	}
	var h plumbing.Hash
	copy(h[:], x.Names[x.FanoutMapping[first]][20*int(second):])
	return h, nil
}

func (x *fullIndex) buildOffsets() {
	offsetTables.Add(1)
	idx := x.MemoryIndex
	n, err := idx.Count()
	if err != nil {
		x.err = err
		return
	}
	x.posBits = uint(bits.Len64(uint64(n)))
	x.byOff = make([]uint64, 0, n)
	var top uint64 // the largest offset
	i := uint32(0)
	for first, fanout := range idx.Fanout {
		mapped := idx.FanoutMapping[first]
		for second := uint32(0); i < fanout; i++ {
			if mapped < 0 || mapped >= len(idx.Offset32) || mapped >= len(idx.Names) || 4*int(second)+4 > len(idx.Offset32[mapped]) || 20*int(second)+20 > len(idx.Names[mapped]) {
				x.err = idxfile.ErrMalformedIdxFile
				return
			}
			off := uint64(binary.BigEndian.Uint32(idx.Offset32[mapped][4*second:]))
			if off&(1<<31) != 0 {
				k := 8 * (off &^ (1 << 31))
				if k+8 > uint64(len(idx.Offset64)) {
					x.err = idxfile.ErrMalformedIdxFile
					return
				}
				off = binary.BigEndian.Uint64(idx.Offset64[k:])
			}
			if off >= 1<<(64-x.posBits) {
				// Beyond any pack (2^44 bytes and more at a million
				// objects): a broken index.
				x.err = idxfile.ErrMalformedIdxFile
				return
			}
			top = max(top, off)
			x.byOff = append(x.byOff, off<<x.posBits|uint64(i))
			second++
		}
	}
	radixSort(x.byOff, x.posBits, x.posBits+uint(bits.Len64(top)))
}

// radixSort sorts keys by their bits lo to hi (least significant digit
// first, 11 bits a pass). Offsets are unique, so those bits order every
// key. A million objects: 3 passes, a quarter of the time of a
// comparison sort (which took 170 ms of a 1M-fact sync), and a transient
// copy of the keys.
func radixSort(keys []uint64, lo, hi uint) {
	const digit = 11
	tmp := make([]uint64, len(keys))
	src, dst := keys, tmp
	for s := lo; s < hi; s += digit {
		var count [1 << digit]int
		for _, k := range src {
			count[(k>>s)&(1<<digit-1)]++
		}
		sum := 0
		for d, c := range count {
			count[d], sum = sum, sum+c
		}
		for _, k := range src {
			d := (k >> s) & (1<<digit - 1)
			dst[count[d]] = k
			count[d]++
		}
		src, dst = dst, src
	}
	if len(keys) > 0 && &src[0] != &keys[0] {
		copy(keys, src)
	}
}

// index opens the pack's index on first use (its header and fan-out
// only); nil when it cannot be read.
func (p *packHandle) index(dir string) *packIndex {
	if p.idx != nil || p.bad {
		return p.idx
	}
	idx, err := openPackIndex(filepath.Join(dir, "pack", p.name))
	if err != nil {
		p.bad = true
		return nil
	}
	p.idx = idx
	return p.idx
}

// parseIdx reads a version 2 pack index as go-git's decoder does, but its
// tables are slices of the file's bytes (no copy), and the file's own
// checksum is not computed: git does not either when it opens a pack (fsck
// does). At a million objects go-git's decoder took 80 ms, 70 of them
// hashing the 29 MB with collision-detecting SHA-1, of a 1M-fact sync's
// 250 ms of CPU. The structure is checked as git checks it: magic,
// version, a fan-out that never decreases, a size that fits the count and
// the large offsets.
func parseIdx(b []byte) (*idxfile.MemoryIndex, error) {
	const hdr, fan = 8, 256 * 4
	if len(b) < hdr+fan+40 || string(b[:4]) != "\377tOc" {
		return nil, idxfile.ErrMalformedIdxFile
	}
	if v := binary.BigEndian.Uint32(b[4:]); v != idxfile.VersionSupported {
		return nil, idxfile.ErrUnsupportedVersion
	}
	idx := idxfile.NewMemoryIndex()
	idx.Version = idxfile.VersionSupported
	for k := range 256 {
		idx.Fanout[k] = binary.BigEndian.Uint32(b[hdr+4*k:])
		if k > 0 && idx.Fanout[k] < idx.Fanout[k-1] {
			return nil, idxfile.ErrMalformedIdxFile
		}
		idx.FanoutMapping[k] = -1
	}
	n := uint64(idx.Fanout[255])
	names := uint64(hdr + fan)
	crcs := names + 20*n
	offs := crcs + 4*n
	big := offs + 4*n
	if big+40 > uint64(len(b)) {
		return nil, idxfile.ErrMalformedIdxFile
	}
	large := uint64(0)
	for i := offs; i < big; i += 4 {
		if b[i]&0x80 != 0 {
			large++
		}
	}
	if big+8*large+40 != uint64(len(b)) {
		return nil, idxfile.ErrMalformedIdxFile
	}
	if large > 0 {
		idx.Offset64 = b[big : big+8*large : big+8*large]
	}
	prev := uint64(0)
	for k := range 256 {
		c := uint64(idx.Fanout[k])
		if c == prev {
			continue
		}
		idx.FanoutMapping[k] = len(idx.Names)
		idx.Names = append(idx.Names, b[names+20*prev:names+20*c:names+20*c])
		idx.CRC32 = append(idx.CRC32, b[crcs+4*prev:crcs+4*c:crcs+4*c])
		idx.Offset32 = append(idx.Offset32, b[offs+4*prev:offs+4*c:offs+4*c])
		prev = c
	}
	tail := big + 8*large
	copy(idx.PackfileChecksum[:], b[tail:])
	copy(idx.IdxChecksum[:], b[tail+20:])
	return idx, nil
}

// reindex forgets the pack list and the alternates, so the next lookup
// sees packs a concurrent repack wrote.
func (db *objectDB) reindex() {
	db.known = false
	for _, a := range db.alts {
		a.reindex()
	}
}

func (db *objectDB) close() error {
	var first error
	for _, p := range db.packs {
		if err := p.close(); err != nil && first == nil {
			first = err
		}
	}
	for _, a := range db.alts {
		if err := a.close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (p *packHandle) close() error {
	if p.idx != nil {
		p.idx.close()
	}
	if p.f == nil {
		return nil
	}
	err := p.f.Close()
	p.f, p.pf = nil, nil
	return err
}

// alternates reads objects/info/alternates once: one object directory a
// line, relative paths from this objects directory, as git reads them.
func (db *objectDB) alternates() []*objectDB {
	if db.altOK {
		return db.alts
	}
	db.altOK = true
	if db.depth >= 5 {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(db.dir, "info", "alternates"))
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		if !filepath.IsAbs(line) {
			line = filepath.Join(db.dir, line)
		}
		line = filepath.Clean(line)
		if seen[line] || line == filepath.Clean(db.dir) {
			continue
		}
		seen[line] = true
		if fi, err := os.Stat(line); err != nil || !fi.IsDir() {
			continue
		}
		db.alts = append(db.alts, newObjectDB(line, db.cache, db.depth+1))
	}
	return db.alts
}

// osFile is an *os.File as go-git's packfile reader wants it (billy.File);
// the reader only reads, seeks and closes.
type osFile struct{ *os.File }

func (osFile) Lock() error   { return nil }
func (osFile) Unlock() error { return nil }
