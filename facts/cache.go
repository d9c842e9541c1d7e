package facts

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/git-rally/git-rally/refs"
)

// The cache lives under <common dir>/rally/cache and is never synced: it
// can be deleted at any time and is rebuilt from the ledger. It holds
//
//	state.gob         the projection at one ledger head, the trees along
//	                   the newest append path (so an append or a diff reads
//	                   no packed object), and the mirror's length
//	handoffs-<h>.gob   the projection's handoffs, named by content: rewritten
//	                   only when they change, decoded only when looked at
//	facts-<gen>.jsonl  every fact of that head, one line each, append-only
//	                   within a generation; a rebuild starts a new one
const cacheVersion = 8

// maxTreeEntries bounds a tree kept in state.gob (a day of more than 512
// segments, or a segment written by a large merge, is read again instead).
const maxTreeEntries = 512

type cache struct {
	dir   string
	trees map[refs.Hash][]refs.Entry
	// raw are the trees state.gob carried, decoded on first use: only an
	// append or a catch-up looks at them.
	raw   map[refs.Hash][]string
	saved *cacheFile
}

type cacheFile struct {
	Version   int                 `json:"version"`
	State     *State              `json:"state"`
	Gen       int                 `json:"gen"`
	MirrorLen int64               `json:"mirror_len"`
	Trees     map[string][]string `json:"trees"`
	// MirrorSum is the CRC-32C of the mirror's first MirrorLen bytes.
	MirrorSum uint32 `json:"mirror_sum"`
	// HandoffsFile names the file with the state's handoffs ("": none).
	// A room's waiting handoffs can be most of the projection; an append
	// that does not touch them neither decodes nor rewrites them.
	HandoffsFile string `json:"handoffs_file"`
}

func newCache(commonDir string) *cache {
	return &cache{dir: filepath.Join(commonDir, "rally", "cache"), trees: map[refs.Hash][]refs.Entry{}, raw: map[refs.Hash][]string{}}
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
func (c *cache) load() *State {
	b, err := os.ReadFile(filepath.Join(c.dir, "state.gob"))
	if err != nil {
		return nil
	}
	cf, ok := decodeCacheFile(b)
	if !ok {
		return nil
	}
	hb := []byte{}
	if cf.HandoffsFile != "" {
		// Read now, decoded later: a writer may remove the file once two
		// newer ones exist. Its name is its checksum.
		sealed, err := os.ReadFile(filepath.Join(c.dir, cf.HandoffsFile))
		if err != nil {
			return nil
		}
		if hb, ok = openSealed(sealed, "handoffs", ""); !ok || handoffsName(hb) != cf.HandoffsFile {
			return nil
		}
	}
	cf.State.handoffs, cf.State.handoffsGob, cf.State.handoffsFile = nil, hb, cf.HandoffsFile
	cf.State.init()
	for k, es := range cf.Trees {
		h, err := refs.ParseHash(k)
		if err != nil {
			continue
		}
		if _, ok := c.trees[h]; !ok {
			c.raw[h] = es
		}
	}
	c.saved = cf
	return cf.State
}

// decodeCacheFile decodes state.gob; the state's handoffs are not in it.
// A file that is damaged, truncated, of another version or whose header
// names another head than its state is not believed.
func decodeCacheFile(b []byte) (cf *cacheFile, ok bool) {
	defer func() {
		if recover() != nil { // gob on bytes that passed the checksum: a bug, not a crash
			cf, ok = nil, false
		}
	}()
	payload, head, ok := openSealedHead(b, "state")
	if !ok {
		return nil, false
	}
	var f cacheFile
	if gob.NewDecoder(bytes.NewReader(payload)).Decode(&f) != nil || f.Version != cacheVersion || f.State == nil || f.State.Head != head {
		return nil, false
	}
	return &f, true
}

// encodeCacheFile encodes state.gob: cf with st (see State.withoutRaw).
func encodeCacheFile(cf cacheFile, st *State) ([]byte, error) {
	cf.State = st
	var enc bytes.Buffer
	if err := gob.NewEncoder(&enc).Encode(&cf); err != nil {
		return nil, err
	}
	return seal(enc.Bytes(), "state", st.Head), nil
}

// Every cache file starts with a header line that names what it is, the
// version that wrote it, the ledger head it belongs to, the payload's
// length and its CRC-32C:
//
//	rally-cache 7 state 3f2a...c1 25108 9a0b1c2d
//
// so a damaged, truncated or foreign file is detected before it is
// decoded, and rebuilt from the ledger.
const sealMagic = "rally-cache"

// castagnoli is made on first use: its tables cost 0.2 ms to build, in
// every process if made at package initialisation.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

func seal(payload []byte, kind, head string) []byte {
	if head == "" {
		head = "-"
	}
	hdr := fmt.Sprintf("%s %d %s %s %d %08x\n", sealMagic, cacheVersion, kind, head, len(payload), crc32.Checksum(payload, castagnoli()))
	return append([]byte(hdr), payload...)
}

// openSealed returns the payload of a sealed file of the given kind (and
// head, unless head is "").
func openSealed(b []byte, kind, head string) ([]byte, bool) {
	payload, h, ok := openSealedHead(b, kind)
	if !ok || (head != "" && h != head) {
		return nil, false
	}
	return payload, true
}

func openSealedHead(b []byte, kind string) ([]byte, string, bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 || i > 200 {
		return nil, "", false
	}
	f := strings.Fields(string(b[:i]))
	if len(f) != 6 || f[0] != sealMagic || f[1] != strconv.Itoa(cacheVersion) || f[2] != kind {
		return nil, "", false
	}
	n, err := strconv.Atoi(f[4])
	payload := b[i+1:]
	if err != nil || n != len(payload) || fmt.Sprintf("%08x", crc32.Checksum(payload, castagnoli())) != f[5] {
		return nil, "", false
	}
	head := f[3]
	if head == "-" {
		head = ""
	}
	return payload, head, true
}

// handoffsName is the file name of encoded handoffs: their content hash.
func handoffsName(hb []byte) string {
	sum := sha256.Sum256(hb)
	return "handoffs-" + hex.EncodeToString(sum[:10]) + ".gob"
}

// saveHandoffs writes st's handoffs into a file named by their content and
// returns its name ("": no handoffs). Handoffs nobody decoded since they
// were loaded are the file they came from: nothing is written. A new file
// never replaces one in place, and files older than the one the previous
// state named are removed.
func (c *cache) saveHandoffs(st *State) (string, error) {
	if st.handoffs == nil && st.handoffsFile != "" {
		return st.handoffsFile, nil
	}
	hb, err := encodeHandoffs(st)
	if err != nil || len(hb) == 0 {
		return "", err
	}
	name := handoffsName(hb)
	p := filepath.Join(c.dir, name)
	if _, err := os.Stat(p); err == nil {
		return name, nil
	}
	tmp := fmt.Sprintf("%s.%d.tmp", p, os.Getpid())
	if err := os.WriteFile(tmp, seal(hb, "handoffs", ""), 0o666); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return "", err
	}
	prev := ""
	if c.saved != nil {
		prev = c.saved.HandoffsFile
	}
	if ents, err := os.ReadDir(c.dir); err == nil {
		for _, e := range ents {
			n := e.Name()
			if strings.HasPrefix(n, "handoffs-") && strings.HasSuffix(n, ".gob") && n != name && n != prev {
				os.Remove(filepath.Join(c.dir, n))
			}
		}
	}
	return name, nil
}

func (c *cache) tree(h refs.Hash) ([]refs.Entry, bool) {
	if es, ok := c.trees[h]; ok {
		return es, true
	}
	raw, ok := c.raw[h]
	if !ok {
		return nil, false
	}
	es := make([]refs.Entry, 0, len(raw))
	for _, e := range raw {
		if ent, ok := decodeEntry(e); ok {
			es = append(es, ent)
		}
	}
	delete(c.raw, h)
	c.trees[h] = es
	return es, true
}

func (c *cache) remember(h refs.Hash, es []refs.Entry) {
	if _, ok := c.trees[h]; !ok {
		c.trees[h] = es
	}
}

// headPath returns the trees, root first, along the newest path under
// root: facts/, then at each level the directory with the greatest name
// (the newest month, day and segment). They are the trees the next
// append rewrites and the old side of the next catch-up's diff; state.gob
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

func encodeEntry(e refs.Entry) string {
	t := "b"
	if e.Dir {
		t = "d"
	}
	return t + e.Hash.String() + e.Name
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

func (c *cache) mirrorPath(gen int) string {
	return filepath.Join(c.dir, fmt.Sprintf("facts-%d.jsonl", gen))
}

// mirrorBytes returns the mirror's lines for the saved state.
func (c *cache) mirrorBytes(st *State) ([]byte, bool) {
	if c.saved == nil || c.saved.State == nil || c.saved.State.Head != st.Head {
		return nil, false
	}
	f, err := os.Open(c.mirrorPath(c.saved.Gen))
	if err != nil {
		return nil, false
	}
	defer f.Close()
	data := make([]byte, c.saved.MirrorLen)
	if _, err := io.ReadFull(f, data); err != nil || crc32.Checksum(data, castagnoli()) != c.saved.MirrorSum {
		return nil, false
	}
	return data, true
}

// mirror returns the facts of the saved state from the mirror file.
func (c *cache) mirror(st *State) ([]*Fact, bool) {
	data, ok := c.mirrorBytes(st)
	if !ok {
		return nil, false
	}
	out := make([]*Fact, 0, st.Facts)
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return nil, false
		}
		fact, err := Parse(data[:i])
		if err != nil {
			return nil, false
		}
		out = append(out, fact)
		data = data[i+1:]
	}
	if len(out) != st.Facts {
		return nil, false
	}
	return out, true
}

// save records st. With full, fs is every fact and a new mirror generation
// is written; otherwise fs are the facts added since the saved state. The
// caller holds the cache lock. Failures are ignored: the cache is only an
// accelerator.
func (c *cache) save(st *State, fs []*Fact, full bool) {
	if err := os.MkdirAll(c.dir, 0o777); err != nil {
		return
	}
	var mg mirrorGen
	if c.saved != nil && !full && c.saved.State != nil {
		mg = mirrorGen{c.saved.Gen, c.saved.MirrorLen, c.saved.MirrorSum}
		mf, err := os.OpenFile(c.mirrorPath(mg.gen), os.O_RDWR, 0o666)
		if err != nil {
			return // keep the old state; the next reader rebuilds
		}
		var buf bytes.Buffer
		for _, f := range sortedCopy(fs) {
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
		mg.n += int64(buf.Len())
		mg.sum = crc32.Update(mg.sum, castagnoli(), buf.Bytes())
	} else if full {
		var err error
		mg, err = c.writeMirror(func(w io.Writer) error {
			for _, f := range sortedCopy(fs) {
				w.Write(f.Raw)
			}
			return nil
		})
		if err != nil {
			return
		}
	} else {
		return // no mirror to add to: the next reader rebuilds
	}
	c.saveWith(st, mg)
}

// saveWith records st with the mirror generation mg, which holds its
// facts.
func (c *cache) saveWith(st *State, mg mirrorGen) {
	cf := cacheFile{Version: cacheVersion, State: st, Trees: map[string][]string{}}
	cf.Gen, cf.MirrorLen, cf.MirrorSum = mg.gen, mg.n, mg.sum
	for _, h := range c.headPath(st.Tree) {
		es := c.trees[h]
		if len(es) > maxTreeEntries {
			continue
		}
		enc := make([]string, len(es))
		for i, e := range es {
			enc[i] = encodeEntry(e)
		}
		cf.Trees[h.String()] = enc
	}
	stripped := st.withoutRaw()
	hf, err := c.saveHandoffs(stripped)
	if err != nil {
		return
	}
	cf.HandoffsFile = hf
	b, err := encodeCacheFile(cf, stripped)
	if err != nil {
		return
	}
	tmp := filepath.Join(c.dir, fmt.Sprintf("state.gob.%d.tmp", os.Getpid()))
	if os.WriteFile(tmp, b, 0o666) != nil {
		return
	}
	if os.Rename(tmp, filepath.Join(c.dir, "state.gob")) != nil {
		os.Remove(tmp)
		return
	}
	c.saved = &cf
}

// sortedCopy returns fs in (clock, id) order: the mirror is kept sorted,
// so its tail is the newest facts (Ledger.Tail).
func sortedCopy(fs []*Fact) []*Fact {
	out := append([]*Fact(nil), fs...)
	SortFacts(out)
	return out
}

// encodeHandoffs returns the encoding of st's handoffs: the bytes it was
// loaded with when nothing decoded them since; none for none.
func encodeHandoffs(st *State) ([]byte, error) {
	if st.handoffs == nil {
		return st.handoffsGob, nil
	}
	if len(st.handoffs) == 0 {
		return nil, nil
	}
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(st.handoffs); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// decodeHandoffs is the inverse of encodeHandoffs; no bytes is no handoff.
func decodeHandoffs(b []byte) (m map[string]*Handoff, err error) {
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, fmt.Errorf("decoding cached handoffs: %v", r)
		}
	}()
	m = map[string]*Handoff{}
	if len(b) == 0 {
		return m, nil
	}
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
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
		if _, err := fmt.Sscanf(e.Name(), "facts-%d.jsonl", &g); err == nil && g < keep && strings.HasSuffix(e.Name(), ".jsonl") {
			os.Remove(filepath.Join(c.dir, e.Name()))
		}
	}
}

// clone copies the state deeply enough that Apply on the copy leaves the
// original untouched (facts themselves are immutable and shared).
func (s *State) clone() *State {
	cp := *s
	cp.ByKind = cloneMap(s.ByKind)
	cp.Peers = make(map[string]*Peer, len(s.Peers))
	for k, p := range s.Peers {
		pp := *p
		cp.Peers[k] = &pp
	}
	cp.Claims = cloneMap(s.Claims)
	if s.handoffs != nil {
		cp.handoffs = make(map[string]*Handoff, len(s.handoffs))
		for k, h := range s.handoffs {
			hh := *h
			hh.Answers = cloneMap(h.Answers)
			cp.handoffs[k] = &hh
		}
	}
	cp.Blockers = cloneMap(s.Blockers)
	cp.Risks = cloneMap(s.Risks)
	cp.Sessions = cloneMap(s.Sessions)
	cp.Artifacts = cloneMap(s.Artifacts)
	cp.Retraction = cloneMap(s.Retraction)
	cp.Contest = cloneMap(s.Contest)
	if s.Future != nil {
		cp.Future = cloneMap(s.Future)
	}
	cp.Plans = clonePlans(s.Plans)
	return &cp
}

func cloneMap[K comparable, V any](m map[K]V) map[K]V {
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// withoutRaw copies the state with the facts' stored lines left out: the
// projection needs their fields only, and the lines are in the mirror.
func (s *State) withoutRaw() *State {
	strip := func(f *Fact) *Fact {
		if f == nil || f.Raw == nil {
			return f
		}
		c := *f
		c.Raw = nil
		return &c
	}
	stripAll := func(m map[string]*Fact) map[string]*Fact {
		out := make(map[string]*Fact, len(m))
		for k, f := range m {
			out[k] = strip(f)
		}
		return out
	}
	cp := *s
	cp.Claims, cp.Blockers, cp.Risks, cp.Sessions = stripAll(s.Claims), stripAll(s.Blockers), stripAll(s.Risks), stripAll(s.Sessions)
	if s.handoffs != nil {
		cp.handoffs = make(map[string]*Handoff, len(s.handoffs))
		for k, h := range s.handoffs {
			hh := *h
			hh.Fact = strip(h.Fact)
			cp.handoffs[k] = &hh
		}
	}
	cp.Plans = stripPlans(s.Plans, strip)
	cp.Artifacts = make(map[string]*Artifact, len(s.Artifacts))
	for k, a := range s.Artifacts {
		aa := *a
		aa.Fact = strip(a.Fact)
		cp.Artifacts[k] = &aa
	}
	return &cp
}
