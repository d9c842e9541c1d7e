package refs

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"

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
	idx  *idxfile.MemoryIndex
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
		obj, err := p.pf.GetByOffset(off)
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

// index reads the pack's index on first use; nil when it cannot be read.
func (p *packHandle) index(dir string) *idxfile.MemoryIndex {
	if p.idx != nil || p.bad {
		return p.idx
	}
	b, err := os.ReadFile(filepath.Join(dir, "pack", p.name))
	if err != nil {
		p.bad = true
		return nil
	}
	idx := idxfile.NewMemoryIndex()
	if err := idxfile.NewDecoder(bytes.NewReader(b)).Decode(idx); err != nil {
		p.bad = true
		return nil
	}
	p.idx = idx
	return idx
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
