package ledger

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// The cache lives under <common dir>/rally/cache and is never synced: it
// can be deleted at any time and is rebuilt from the ledger. It holds
//
//	state.bin          the projection at one ledger head but its handoffs
//	                   and most of its claims, the trees along the newest
//	                   append path (so an append or a diff reads no packed
//	                   object), and the mirror's length; every append
//	                   rewrites it, so it stays small
//	claims-<h>.bin     open claims with an index by id, owner and scope
//	                   prefix, named by content; state.bin lists the claims
//	                   opened and closed since (at most compactAt), and a
//	                   lookup decodes only the claims it finds
//	handoffs-<h>.bin   the projection's handoffs, named by content: rewritten
//	                   only when they change, decoded only when looked at
//	facts-<gen>.jsonl  every fact of that head, one line each, append-only
//	                   within a generation; a rebuild starts a new one
//	facts-<gen>.idx    a record per mirror line (mirrorindex.go)
//
// The .bin files are in the cache's own encoding (cachecodec.go).
const cacheVersion = 15 // 15: held-back facts as a count and the earliest time; 14: a stopped session's owner has left; 13: with status facts (activity); 12: the lead fact and rejected handoffs

const stateFile = "state.bin"

// maxTreeEntries bounds a tree kept in state.bin (a day of more than 512
// segments, or a segment written by a large merge, is read again instead).
const maxTreeEntries = 512

type cache struct {
	dir   string
	trees map[refs.Hash][]refs.Entry
	// rawTrees is the trees section of state.bin, decoded on first use:
	// only an append or a catch-up looks at it.
	rawTrees []byte
	saved    *cacheFile
}

type cacheFile struct {
	State     *facts.State
	Gen       int
	MirrorLen int64
	// MirrorSum is the CRC-32 of the mirror's first MirrorLen bytes.
	MirrorSum uint32
	// HandoffsFile names the file with the state's handoffs ("": none).
	// A room's waiting handoffs can be most of the projection; an append
	// that does not touch them neither decodes nor rewrites them.
	HandoffsFile string
	// ClaimsFile names the claims file ("": every claim is in state.bin)
	// and ClaimsSum is its payload's CRC-32.
	ClaimsFile string
	ClaimsSum  uint32
}

func newCache(commonDir string) *cache {
	return &cache{dir: filepath.Join(commonDir, "rally", "cache"), trees: map[refs.Hash][]refs.Entry{}}
}

func (c *cache) lock() func() {
	f, err := refs.QueueLock(filepath.Dir(filepath.Dir(c.dir)), "cache")
	if err != nil {
		return func() {}
	}
	return func() { refs.UnlockQueue(f) }
}

// load returns the cached state or nil. The state is private to the
// caller's process; the trees it carries are merged into the tree cache.
func (c *cache) load() *facts.State {
	b, err := os.ReadFile(filepath.Join(c.dir, stateFile))
	if err != nil {
		return nil
	}
	cf, trees, ok := decodeCacheFile(b)
	if !ok {
		return nil
	}
	// The other files are read now, decoded later: a writer may remove
	// them once two newer ones exist.
	hb := []byte{}
	if cf.HandoffsFile != "" {
		sealed, err := os.ReadFile(filepath.Join(c.dir, cf.HandoffsFile))
		if err != nil {
			return nil
		}
		if hb, ok = openSealed(sealed, "handoffs", ""); !ok || contentName("handoffs-", hb) != cf.HandoffsFile {
			return nil
		}
	}
	if cf.ClaimsFile != "" {
		base := openClaimsFile(filepath.Join(c.dir, cf.ClaimsFile), cf.ClaimsSum)
		if base == nil {
			return nil
		}
		base.name = cf.ClaimsFile
		for i := range cf.State.Claims.Gone {
			if int(i) >= base.Len() {
				return nil
			}
		}
		cf.State.Claims.Base = base
	} else if len(cf.State.Claims.Gone) > 0 {
		return nil
	}
	cf.State.SetPendingHandoffs(&facts.PendingHandoffs{Enc: hb, File: cf.HandoffsFile, Decode: decodeHandoffs})
	cf.State.Init()
	c.rawTrees = trees
	c.saved = cf
	return cf.State
}

// decodeCacheFile decodes state.bin and returns its trees section still
// encoded. A file that is damaged, truncated, of another version or whose
// header names another head than its state is not believed.
func decodeCacheFile(b []byte) (cf *cacheFile, trees []byte, ok bool) {
	defer func() {
		if recover() != nil { // on bytes that passed the checksum: a bug, not a crash
			cf, trees, ok = nil, nil, false
		}
	}()
	payload, head, ok := openSealedHead(b, "state")
	if !ok {
		return nil, nil, false
	}
	d := &decoder{b: payload}
	st, cf := decodeState(d)
	trees = d.bytes()
	if d.bad || len(d.b) != 0 || st.Head != head {
		return nil, nil, false
	}
	cf.State = st
	return cf, trees, true
}

// encodeCacheFile encodes state.bin: cf's state with the trees.
//
// Into one buffer, sized up front, with room for the seal's header before
// the payload: an append saves it every time, and every buffer grown by
// doubling, copied into a string or behind a header was fresh heap, whose
// pages fault in (a third of save's time).
func encodeCacheFile(cf *cacheFile, trees map[refs.Hash][]refs.Entry) []byte {
	hs := make([]refs.Hash, 0, len(trees))
	for h := range trees {
		hs = append(hs, h)
	}
	// Sorted by their hex names, as before: the same bytes.
	sort.Slice(hs, func(i, j int) bool { return bytes.Compare(hs[i][:], hs[j][:]) < 0 })
	tlen := uvarintLen(uint64(len(hs)))
	for _, h := range hs {
		es := trees[h]
		tlen += uvarintLen(40) + 40 + uvarintLen(uint64(len(es)))
		for _, en := range es {
			n := 41 + len(en.Name)
			tlen += uvarintLen(uint64(n)) + n
		}
	}
	e := encoder{b: make([]byte, sealRoom, sealRoom+2048+64*len(cf.State.Claims.Added)+tlen+binary.MaxVarintLen64)}
	encodeState(&e, cf.State, cf)
	e.uint(uint64(tlen))
	start := len(e.b)
	encodeTrees(&e, hs, trees)
	if len(e.b)-start != tlen { // not reached: the sizes above are the encoder's
		var t encoder
		encodeTrees(&t, hs, trees)
		e = encoder{b: make([]byte, sealRoom)}
		encodeState(&e, cf.State, cf)
		e.str(string(t.b))
	}
	return sealAt(e.b, sealRoom, "state", cf.State.Head)
}

// encodeTrees appends state.bin's trees section: the count, then per tree
// its hex id and its entries ("b" or "d", the hex id, the name).
func encodeTrees(e *encoder, hs []refs.Hash, trees map[refs.Hash][]refs.Entry) {
	e.uint(uint64(len(hs)))
	var hexBuf [40]byte
	for _, h := range hs {
		hex.Encode(hexBuf[:], h[:])
		e.uint(40)
		e.b = append(e.b, hexBuf[:]...)
		es := trees[h]
		e.uint(uint64(len(es)))
		for _, en := range es {
			e.uint(uint64(41 + len(en.Name)))
			t := byte('b')
			if en.Dir {
				t = 'd'
			}
			hex.Encode(hexBuf[:], en.Hash[:])
			e.b = append(append(append(e.b, t), hexBuf[:]...), en.Name...)
		}
	}
}

// saveHandoffs writes st's handoffs into a file named by their content and
// returns its name ("": no handoffs). Handoffs nobody decoded since they
// were loaded are the file they came from: nothing is written.
func (c *cache) saveHandoffs(st *facts.State) (string, error) {
	if p := st.Pending(); p != nil && p.File != "" {
		return p.File, nil
	}
	hb := encodeHandoffs(st)
	if len(hb) == 0 {
		return "", nil
	}
	keep := ""
	if c.saved != nil {
		keep = c.saved.HandoffsFile
	}
	return c.writeNamed("handoffs-", "handoffs", hb, keep)
}

func (c *cache) tree(h refs.Hash) ([]refs.Entry, bool) {
	if c.rawTrees != nil {
		c.decodeTrees()
	}
	es, ok := c.trees[h]
	// Clipped: a caller that appends to the entries gets an array of its
	// own, never the spare room of the one the cache keeps.
	return slices.Clip(es), ok
}

// decodeTrees adds the trees state.bin carried to the tree cache.
func (c *cache) decodeTrees() {
	d := &decoder{b: c.rawTrees}
	c.rawTrees = nil
	n := d.count(2)
	for i := 0; i < n && !d.bad; i++ {
		h, err := refs.ParseHash(d.str())
		m := d.count(1)
		es := make([]refs.Entry, 0, m)
		for j := 0; j < m && !d.bad; j++ {
			if ent, ok := decodeEntry(d.str()); ok {
				es = append(es, ent)
			}
		}
		if err == nil && !d.bad {
			if _, ok := c.trees[h]; !ok {
				c.trees[h] = es
			}
		}
	}
}

func (c *cache) remember(h refs.Hash, es []refs.Entry) {
	if _, ok := c.trees[h]; !ok {
		c.trees[h] = es
	}
}

// headPath returns the trees, root first, along the newest path under
// root: facts/, then at each level the directory with the greatest name
// (the newest month, day and segment). They are the trees the next
// append rewrites and the old side of the next catch-up's diff; state.bin
// keeps those alone.
func (c *cache) headPath(root string) []refs.Hash {
	h, err := refs.ParseHash(root)
	if err != nil {
		return nil
	}
	var out []refs.Hash
	for depth := 0; depth < 8; depth++ { // root, facts, month, day, segment
		es, ok := c.tree(h)
		if !ok {
			break
		}
		out = append(out, h)
		found := false
		var best string
		for _, e := range es {
			if e.Dir && (depth > 0 || e.Name == factsDir) && (!found || e.Name > best) {
				best, h, found = e.Name, e.Hash, true
			}
		}
		if !found {
			break
		}
	}
	return out
}

func decodeEntry(s string) (refs.Entry, bool) {
	if len(s) < 42 {
		return refs.Entry{}, false
	}
	h, err := refs.ParseHash(s[1:41])
	if err != nil {
		return refs.Entry{}, false
	}
	return refs.Entry{Name: s[41:], Dir: s[0] == 'd', Hash: h}, true
}

// save records st. With full, fs is every fact and a new mirror generation
// is written; otherwise fs are the facts added since the saved state. The
// caller holds the cache lock. Failures are ignored: the cache is only an
// accelerator.
func (c *cache) save(st *facts.State, fs []*facts.Fact, full bool) {
	c.saveFrom(nil, st, fs, full)
}

// saveFrom records st, which is from plus fs, adding fs to the mirror
// from's state file names (or, when full, writing fs as a new mirror).
// The mirror is added to only when from is the very state this cache last
// loaded or saved: then the mirror holds exactly from's facts. A save
// that did not happen, or a state loaded since that is not from, leaves
// c.saved describing other facts, and lines appended to its mirror would
// stand for a projection they are not (a fact of from missing from the
// mirror that every later rebuild from it would lose). Then nothing is
// saved: the next reader catches up from the state file on disk.
func (c *cache) saveFrom(from, st *facts.State, fs []*facts.Fact, full bool) {
	if err := os.MkdirAll(c.dir, 0o777); err != nil {
		return
	}
	var mg mirrorGen
	if !full && (c.saved == nil || c.saved.State == nil || c.saved.State != from) {
		StaleSaves.Add(1)
		return
	}
	if !full {
		mg = mirrorGen{c.saved.Gen, c.saved.MirrorLen, c.saved.MirrorSum}
		mf, err := os.OpenFile(c.mirrorPath(mg.gen), os.O_RDWR, 0o666)
		if err != nil {
			return // keep the old state; the next reader rebuilds
		}
		sorted := sortedCopy(fs)
		var buf bytes.Buffer
		for _, f := range sorted {
			buf.Write(f.Raw)
		}
		fi, err := mf.Stat()
		ok := err == nil && fi.Size() >= mg.n && mf.Truncate(mg.n) == nil
		if ok {
			_, err = mf.WriteAt(buf.Bytes(), mg.n)
			ok = err == nil
		}
		mf.Close()
		if !ok {
			return
		}
		c.appendIndex(mg.gen, c.saved.State.Facts, mg.n, sorted)
		mg.n += int64(buf.Len())
		mg.sum = crc32.Update(mg.sum, crcTable, buf.Bytes())
	} else {
		var err error
		mg, err = c.writeMirror(func(mw *mirrorWriter) error {
			for _, f := range sortedCopy(fs) {
				mw.add(f.Raw, f)
			}
			return nil
		})
		if err != nil {
			return
		}
	}
	c.saveWith(st, mg)
}

// StaleSaves counts the saves skipped because the cache had moved on from
// the state they extend (tests).
var StaleSaves atomic.Int64

// saveWith records st with the mirror generation mg, which holds its
// facts.
func (c *cache) saveWith(st *facts.State, mg mirrorGen) {
	cf := cacheFile{State: st}
	cf.Gen, cf.MirrorLen, cf.MirrorSum = mg.gen, mg.n, mg.sum
	trees := map[refs.Hash][]refs.Entry{}
	for _, h := range c.headPath(st.Tree) {
		if es := c.trees[h]; len(es) <= maxTreeEntries {
			trees[h] = es
		}
	}
	if st.Damaged || claimsFile(&st.Claims).isDamaged() {
		return
	}
	hf, err := c.saveHandoffs(st)
	if err != nil {
		return
	}
	cf.HandoffsFile = hf
	if cf.ClaimsFile, cf.ClaimsSum, err = c.saveClaims(st); err != nil {
		return
	}
	b := encodeCacheFile(&cf, trees)
	if overwrite(filepath.Join(c.dir, stateFile), b) != nil {
		return
	}
	if c.saved == nil {
		// A cache of an older version goes with its first rebuild.
		for _, old := range []string{"state.gob", "handoffs-*.gob"} {
			ms, _ := filepath.Glob(filepath.Join(c.dir, old))
			for _, m := range ms {
				os.Remove(m)
			}
		}
	}
	c.saved = &cf
}

// overwrite rewrites state.bin in place, under the cache lock. A new file
// renamed over it would free the old file's inode at every append, and on
// ext4 every file created in that block group for the next minutes (the
// append's objects, the lock, the ref) scans past each inode freed there
// (recently_deleted). A reader that reads it half written sees a length or
// a checksum that does not match its header, believes nothing of it and
// reads again under the cache lock; a writer killed halfway leaves a
// damaged file, which the next reader rebuilds like any other.
func overwrite(p string, b []byte) error {
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return err
	}
	_, err = f.WriteAt(b, 0)
	if err == nil {
		err = f.Truncate(int64(len(b)))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// sortedCopy returns fs in (clock, id) order: the mirror is kept sorted,
// so its tail is the newest facts (Ledger.Tail).
func sortedCopy(fs []*facts.Fact) []*facts.Fact {
	out := append([]*facts.Fact(nil), fs...)
	facts.SortFacts(out)
	return out
}

// loadGen returns the newest mirror generation on disk.
func (c *cache) loadGen() int {
	ents, err := os.ReadDir(c.dir)
	if err != nil {
		return 0
	}
	gen := 0
	for _, e := range ents {
		var g int
		if _, err := fmt.Sscanf(e.Name(), "facts-%d.jsonl", &g); err == nil && strings.HasSuffix(e.Name(), ".jsonl") && g > gen {
			gen = g
		}
	}
	return gen
}

// removeGensBefore deletes mirror generations older than keep; a reader
// holding one open still reads it.
func (c *cache) removeGensBefore(keep int) {
	ents, err := os.ReadDir(c.dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		var g int
		if _, err := fmt.Sscanf(e.Name(), "facts-%d.", &g); err == nil && g < keep && (strings.HasSuffix(e.Name(), ".jsonl") || strings.HasSuffix(e.Name(), ".idx") || strings.Contains(e.Name(), ".ids")) {
			os.Remove(filepath.Join(c.dir, e.Name()))
		}
	}
}

// common is the repository's common dir the cache lives under.
func (c *cache) common() string { return filepath.Dir(filepath.Dir(c.dir)) }
