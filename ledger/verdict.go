package ledger

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// Verdicts on facts (SPEC §17): whether the commit that introduced a fact
// was signed by a key the allowed-signers file lists for the fact's tool.
const (
	Verified = "verified"
	Unsigned = "unsigned"
	BadSig   = "bad"
)

// sigRecord is what one commit that introduced a fact says about it: no
// signature ('u'), a signature that does not verify ('x'), or a good
// signature by keys[key] at the commit's time ('g'). Which key may sign
// for whom is decided when a verdict is asked for, so a changed
// allowed-signers file (a rotation) needs no new walk.
type sigRecord struct {
	state byte
	key   int32
	at    int64
}

// sigEntry is a record with the fact it is about: the number its id's
// 16 hex digits spell (24 bytes a fact; a map from id strings to slices
// of records was over 100, 1.2 GB with the facts doctor held at a
// million facts).
type sigEntry struct {
	id uint64
	sigRecord
}

// verdictCache is the machine-local record of every commit's signature
// check, under <common>/rally/verdicts/: "head" (every ancestor of that
// commit is recorded, and the length "sigs" had then) and "sigs" (keys and
// per-fact records, append-only), and "table" (sigs' records sorted by
// id, verdicttable.go). Each commit's signature is checked once; a
// verdict is a lookup. A "sigs" shorter than head says (truncated,
// damaged) is not trusted: everything is checked again.
type verdictCache struct {
	dir     string
	head    string
	sigsLen int64
	keys    []refs.PublicKey
	keyIdx  map[string]int
	// ents holds the records of ids of rally's form that tab does not
	// (all of them when there is no table), sorted by id (and their order
	// in sigs) once loaded or updated; other those of any other id (a
	// hand-made fact's).
	ents  []sigEntry
	other map[string][]sigEntry
	tab   *verdictTable // the records of sigs' first tab.covers bytes; nil: none
}

func newVerdictCache(commonDir string) *verdictCache {
	vc := &verdictCache{dir: filepath.Join(commonDir, "rally", "verdicts")}
	vc.reset()
	return vc
}

func (vc *verdictCache) reset() {
	if vc.tab != nil {
		vc.tab.Close()
	}
	vc.head, vc.sigsLen, vc.keys, vc.keyIdx, vc.ents, vc.other, vc.tab = "", 0, nil, map[string]int{}, nil, map[string][]sigEntry{}, nil
}

// add records rec for the fact id (sort must follow before a lookup).
func (vc *verdictCache) add(id []byte, rec sigRecord) {
	if n, ok := parseFactID(unsafe.String(unsafe.SliceData(id), len(id))); ok {
		vc.ents = append(vc.ents, sigEntry{n, rec})
		return
	}
	vc.other[string(id)] = append(vc.other[string(id)], sigEntry{0, rec})
}

// sort orders the records by id, each id's in the order recorded.
func (vc *verdictCache) sort() {
	slices.SortStableFunc(vc.ents, func(a, b sigEntry) int { return cmp.Compare(a.id, b.id) })
}

// find returns the records of the fact id.
func (vc *verdictCache) find(id string) []sigEntry {
	n, ok := parseFactID(id)
	if !ok {
		return vc.other[id]
	}
	var out []sigEntry
	if vc.tab != nil {
		recs, ok := vc.tab.find(n)
		if !ok {
			// A block that does not hold: every record read from sigs
			// again, and the table written again.
			vc.load(true)
			return vc.find(id)
		}
		out = recs
	}
	i, _ := slices.BinarySearchFunc(vc.ents, n, func(e sigEntry, n uint64) int { return cmp.Compare(e.id, n) })
	j := i
	for j < len(vc.ents) && vc.ents[j].id == n {
		j++
	}
	if out == nil {
		return vc.ents[i:j]
	}
	return append(out, vc.ents[i:j]...)
}

// load reads the cache files: the table and what sigs holds beyond it,
// or (full, no table that holds, or one that covers too little of sigs)
// all of sigs, streamed, writing the table again when it has
// verdictTableAt records or more. Damaged lines are skipped.
func (vc *verdictCache) load(full ...bool) {
	vc.reset()
	b, err := os.ReadFile(filepath.Join(vc.dir, "head"))
	if err != nil {
		return
	}
	var head string
	var sigsLen int64
	if n, _ := fmt.Sscanf(string(b), "%s %d", &head, &sigsLen); n != 2 {
		return
	}
	f, err := os.Open(filepath.Join(vc.dir, "sigs"))
	if err != nil {
		return
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() < sigsLen {
		return
	}
	if len(full) == 0 || !full[0] {
		if t, extra, ok := openVerdictTable(vc.tablePath(), f, sigsLen); ok && sigsLen-t.covers <= verdictTail {
			vc.tab = t
			vc.parse(bytes.NewReader(extra), int64(len(extra)), false)
			vc.parse(io.NewSectionReader(f, t.covers, sigsLen-t.covers), sigsLen-t.covers, true)
			vc.sort()
			vc.head, vc.sigsLen = head, sigsLen
			return
		} else if ok {
			t.Close()
		}
	}
	vc.parse(f, sigsLen, true)
	vc.sort()
	vc.head, vc.sigsLen = head, sigsLen
	if len(vc.ents) >= verdictTableAt {
		vc.writeTable(f)
	}
}

// parse reads the records of n bytes of r (what a writer that died
// before head moved appended is checked again).
func (vc *verdictCache) parse(r io.Reader, n int64, counted bool) {
	if counted {
		verdictRead.Add(n)
	}
	// A record of an unsigned fact is 23 bytes ("f <id> u\n"), others
	// longer: room for all without growing (a copy of a grown slice
	// beside the old one was 24 MB more at a million facts).
	if c := len(vc.ents) + int(n/23) + 1; cap(vc.ents) < c {
		vc.ents = slices.Grow(vc.ents, c-len(vc.ents))
	}
	br := bufio.NewReaderSize(io.LimitReader(r, n), 64<<10)
	var fs [6][]byte
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			rest, err2 := br.ReadBytes('\n') // a key line longer than the buffer
			line, err = append(append([]byte(nil), line...), rest...), err2
		}
		if err != nil {
			break // the end, or a last line without its newline
		}
		line = line[:len(line)-1]
		if len(line) > 2 && line[0] == 'k' && line[1] == ' ' {
			f := strings.Fields(string(line))
			if len(f) < 3 {
				continue
			}
			pub, err := refs.SSH.ParseKey([]byte(strings.Join(f[2:], " ")))
			if n, _ := strconv.Atoi(f[1]); err == nil && n == len(vc.keys) {
				vc.keyIdx[string(pub.Marshal())] = n
				vc.keys = append(vc.keys, pub)
			}
			continue
		}
		nf := fields(line, fs[:])
		switch {
		case nf == 3 && string(fs[0]) == "f" && (string(fs[2]) == "u" || string(fs[2]) == "x"):
			vc.add(fs[1], sigRecord{state: fs[2][0]})
		case nf == 5 && string(fs[0]) == "f" && string(fs[2]) == "g":
			k, err1 := strconv.Atoi(string(fs[3]))
			at, err2 := strconv.ParseInt(string(fs[4]), 10, 64)
			if err1 == nil && err2 == nil && k >= 0 && k < len(vc.keys) {
				vc.add(fs[1], sigRecord{state: 'g', key: int32(k), at: at})
			}
		}
	}
}

// fields splits line at spaces into out, as strings.Fields would, and
// returns how many there are (up to len(out)+1: more than out holds).
func fields(line []byte, out [][]byte) int {
	n := 0
	for len(line) > 0 {
		line = bytes.TrimLeft(line, " ")
		if len(line) == 0 {
			break
		}
		i := bytes.IndexByte(line, ' ')
		if i < 0 {
			i = len(line)
		}
		if n == len(out) {
			return n + 1
		}
		out[n] = line[:i]
		n++
		line = line[i:]
	}
	return n
}

// bigWalk is the number of new commits from which they are listed, read
// and diffed through the git command line (rev-list, cat-file --batch,
// diff-tree --stdin) instead of object by object in-process: a first
// verification of a ledger of thousands of commits.
const bigWalk = 64

// updateVerdicts records every commit reachable from head that is not
// recorded. The caller holds the verdicts lock and has just loaded vc.
// What it records is written to sigs as it goes: a first verification
// of a ledger of a million facts holds a record a fact, not the facts'
// paths (diff-tree's answer is streamed, EachAddedFile) nor their lines.
func (l *Ledger) updateVerdicts(vc *verdictCache, head refs.Hash) error {
	scs, hashes, err := l.linearChain(vc, head)
	if err != nil {
		return err
	}
	defer vc.sort() // what was recorded, also when this fails half-way
	big := false
	if scs == nil {
		// Not a short chain on top of the recorded head: a merge, a
		// rewritten ledger, a first verification.
		var not []refs.Hash
		if h, err := refs.ParseHash(vc.head); err == nil {
			not = append(not, h)
		}
		hashes, err = l.Store.RevList(head, not...)
		if err != nil && len(not) > 0 {
			vc.reset() // the recorded head is gone: record from scratch
			os.Remove(vc.tablePath())
			hashes, err = l.Store.RevList(head)
		}
		if err != nil {
			return fmt.Errorf("listing ledger commits: %w", err)
		}
		big = len(hashes) >= bigWalk
		if !big {
			if scs, err = l.Store.ReadSignedCommits(hashes); err != nil {
				return fmt.Errorf("reading ledger commits: %w", err)
			}
		}
		if big {
			// A record a fact is what it keeps, the commits' and paths'
			// garbage what it drops: collected as a rebuild is (at a hot
			// command's GOGC the heap reached 88 MB for 41 live at a
			// million facts).
			defer lowGC()()
		}
	}
	if err := os.MkdirAll(vc.dir, 0o777); err != nil {
		return err
	}
	sw, err := openSigs(filepath.Join(vc.dir, "sigs"), vc.sigsLen)
	if err != nil {
		return err
	}
	defer sw.abandon()
	// Each commit's signature, checked once; keys first in sigs.
	check := func(scs []refs.SignedCommit) []sigRecord {
		recs := make([]sigRecord, len(scs))
		for i, sc := range scs {
			rec, key := checkSignature(sc)
			if rec.state == 'g' {
				k := string(key.Marshal())
				n, ok := vc.keyIdx[k]
				if !ok {
					n = len(vc.keys)
					vc.keyIdx[k], vc.keys = n, append(vc.keys, key)
					fmt.Fprintf(sw.w, "k %d %s", n, refs.SSH.KeyLine(key))
				}
				rec.key = int32(n)
			}
			recs[i] = rec
		}
		return recs
	}
	var line []byte
	record := func(rec sigRecord, id []byte) {
		vc.add(id, rec)
		line = appendSigLine(line[:0], id, rec)
		sw.w.Write(line)
	}
	fact := func(rec sigRecord, p []byte) {
		if isFactPath(unsafe.String(unsafe.SliceData(p), len(p))) {
			id := p[bytes.LastIndexByte(p, '/')+1:]
			record(rec, bytes.TrimSuffix(id, []byte(".json")))
		}
	}
	if big {
		// walkChunk commits at a time: read, checked and diffed, then
		// dropped (a first verification of a million commits held
		// every one, its message and its signed payload).
		for lo := 0; lo < len(hashes); lo += walkChunk {
			hs := hashes[lo:min(lo+walkChunk, len(hashes))]
			scs, err := l.Store.ReadSignedCommits(hs)
			if err != nil {
				return fmt.Errorf("reading ledger commits: %w", err)
			}
			if len(hs) > walkHeld {
				walkHeld = len(hs)
			}
			if err := l.recordChunk(hs, scs, check(scs), fact); err != nil {
				return err
			}
		}
	} else {
		recs := check(scs)
		trees := make(map[refs.Hash]refs.Hash, len(hashes))
		for i, sc := range scs {
			trees[hashes[i]] = sc.Tree
			var parents []refs.Hash
			for _, p := range sc.Parents {
				t, ok := trees[p]
				if !ok {
					pc, err := l.Store.ReadCommit(p)
					if err != nil {
						return fmt.Errorf("checking signatures: %w", err)
					}
					t = pc.Tree
				}
				parents = append(parents, t)
			}
			var ids []string
			if err := l.introduced("", sc.Tree, parents, &ids); err != nil {
				return fmt.Errorf("checking signatures: %w", err)
			}
			for _, id := range ids {
				record(recs[i], []byte(id))
			}
		}
	}
	sl, err := sw.close()
	if err != nil {
		return err
	}
	tmp := filepath.Join(vc.dir, "head.tmp")
	if err := os.WriteFile(tmp, []byte(fmt.Sprintf("%s %d\n", head, sl)), 0o666); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(vc.dir, "head")); err != nil {
		return err
	}
	vc.head, vc.sigsLen = head.String(), sl
	return nil
}

// walkChunk is how many commits a long verification reads, checks and
// diffs at a time (a cat-file and a diff-tree each); walkHeld, for tests,
// the most it held at once.
var (
	walkChunk = 1 << 13
	walkHeld  int
)

// recordChunk records what each of the commits hs (read as scs, checked
// as recs) introduced: a root commit its whole tree, any other what
// diff-tree says it adds against every parent.
func (l *Ledger) recordChunk(hs []refs.Hash, scs []refs.SignedCommit, recs []sigRecord, fact func(sigRecord, []byte)) error {
	at := make(map[refs.Hash]int, len(hs))
	merges := map[refs.Hash]bool{}
	var diffed []refs.Hash
	for i, h := range hs {
		switch len(scs[i].Parents) {
		case 0:
			// A root commit brings in its whole tree: listed by
			// ls-tree, streamed (a ledger imported in one commit of a
			// million facts cost diff-tree --root 520 MB).
			if err := l.Store.WalkTree(scs[i].Tree, func(p []byte, dir bool, _ refs.Hash) {
				if !dir {
					fact(recs[i], p)
				}
			}); err != nil {
				return fmt.Errorf("listing ledger commits: %w", err)
			}
			continue
		case 1:
		default:
			merges[h] = true
		}
		at[h] = i
		diffed = append(diffed, h)
	}
	err := l.Store.EachAddedFile(diffed, func(h refs.Hash) bool { return merges[h] }, func(h refs.Hash, p []byte) {
		fact(recs[at[h]], p)
	})
	if err != nil {
		return fmt.Errorf("diffing ledger commits: %w", err)
	}
	return nil
}

// sigsWriter appends to sigs at a length (dropping whatever an
// interrupted writer left beyond it), buffered.
type sigsWriter struct {
	f  *os.File
	w  *bufio.Writer
	at int64
}

func openSigs(path string, at int64) (*sigsWriter, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o666)
	if err != nil {
		return nil, err
	}
	if err = f.Truncate(at); err == nil {
		_, err = f.Seek(at, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &sigsWriter{f: f, w: bufio.NewWriterSize(f, 64<<10), at: at}, nil
}

// abandon closes sigs unless close did.
func (sw *sigsWriter) abandon() {
	if sw.f != nil {
		sw.f.Close()
	}
}

// close flushes and closes sigs and returns its new length.
func (sw *sigsWriter) close() (int64, error) {
	err := sw.w.Flush()
	end, serr := sw.f.Seek(0, io.SeekCurrent)
	if err == nil {
		err = serr
	}
	if cerr := sw.f.Close(); err == nil {
		err = cerr
	}
	sw.f = nil
	return end, err
}

// linearChain returns, parents first, the commits from the recorded head
// to head when they are a first-parent chain of at most bigWalk commits
// (appends on top of what is recorded), and nil otherwise.
func (l *Ledger) linearChain(vc *verdictCache, head refs.Hash) ([]refs.SignedCommit, []refs.Hash, error) {
	if vc.head == "" {
		return nil, nil, nil
	}
	var scs []refs.SignedCommit
	var hs []refs.Hash
	for c, i := head, 0; i < bigWalk && !c.IsZero(); i++ {
		if c.String() == vc.head {
			for a, b := 0, len(scs)-1; a < b; a, b = a+1, b-1 {
				scs[a], scs[b] = scs[b], scs[a]
				hs[a], hs[b] = hs[b], hs[a]
			}
			return scs, hs, nil
		}
		sc, err := l.Store.ReadSignedCommit(c)
		if err != nil {
			return nil, nil, fmt.Errorf("checking signatures: %w", err)
		}
		if len(sc.Parents) != 1 {
			return nil, nil, nil
		}
		scs, hs = append(scs, sc), append(hs, c)
		c = sc.Parents[0]
	}
	return nil, nil, nil
}

// introduced lists the fact ids under tree t that none of the parent
// trees holds at the same path with the same content: what this commit
// brought in itself. A merge's union carries facts from its parents, so
// it introduces none of them; it descends only where t differs from every
// parent.
func (l *Ledger) introduced(prefix string, t refs.Hash, parents []refs.Hash, out *[]string) error {
	es, err := l.readTree(t)
	if err != nil {
		return err
	}
	pms := make([]map[string]refs.Entry, 0, len(parents))
	for _, p := range parents {
		if p.IsZero() {
			continue
		}
		pes, err := l.readTree(p)
		if err != nil {
			return err
		}
		m := make(map[string]refs.Entry, len(pes))
		for _, e := range pes {
			m[e.Name] = e
		}
		pms = append(pms, m)
	}
	for _, e := range es {
		p := joinPath(prefix, e.Name)
		carried := false
		var sub []refs.Hash
		for _, m := range pms {
			pe, ok := m[e.Name]
			if !ok {
				continue
			}
			if pe.Hash == e.Hash && pe.Dir == e.Dir {
				carried = true
				break
			}
			if pe.Dir && e.Dir {
				sub = append(sub, pe.Hash)
			}
		}
		switch {
		case carried:
		case e.Dir:
			if err := l.introduced(p, e.Hash, sub, out); err != nil {
				return err
			}
		case isFactPath(p):
			*out = append(*out, strings.TrimSuffix(e.Name, ".json"))
		}
	}
	return nil
}

// checkSignature checks a commit's signature on its own: good, bad or
// none, and the key. A signature rally cannot read (a GPG one) is bad.
func checkSignature(sc refs.SignedCommit) (sigRecord, refs.PublicKey) {
	sigChecks++
	if sc.Signature == "" {
		return sigRecord{state: 'u'}, nil
	}
	key, ok := refs.SSH.Check([]byte(sc.Signature), sc.Payload)
	if !ok {
		return sigRecord{state: 'x'}, nil
	}
	return sigRecord{state: 'g', at: sc.When.Unix()}, key
}

// sigChecks counts commits whose signature was checked (for tests: each
// commit once).
var sigChecks int

// Verifier gives the verdict of any fact at the ledger's head.
type Verifier struct {
	vc      *verdictCache
	allowed refs.AllowedSigners // nil: no allowed-signers file
}

// Verifier brings the signature records up to the current head and reads
// the allowed-signers file. It returns nil, nil when verification is not
// configured (Signing.Verifying).
func (l *Ledger) Verifier() (*Verifier, error) {
	if !l.Signing.Verifying() {
		return nil, nil
	}
	if refs.SSH == nil {
		return nil, refs.ErrNoSSH
	}
	head, err := l.Head()
	if err != nil {
		return nil, err
	}
	if l.verifier != nil && l.verifier.vc.head == hashString(head) {
		return l.verifier, nil
	}
	vc := newVerdictCache(l.Store.CommonDir)
	vc.load()
	if head.IsZero() {
		vc.head = ""
	} else if vc.head != head.String() {
		q, err := refs.QueueLock(l.Store.CommonDir, "verdicts")
		if err != nil {
			return nil, err
		}
		vc.load()
		if vc.head != head.String() {
			if err = l.updateVerdicts(vc, head); err == nil {
				vc.keepTable()
			}
		}
		refs.UnlockQueue(q)
		if err != nil {
			// A commit that cannot be read (a shallow or damaged
			// ledger): what was not checked is not verified.
			l.warn("signatures not checked: %v", err)
		}
	}
	v := &Verifier{vc: vc}
	if p := l.Signing.AllowedSigners; p != "" {
		data, err := os.ReadFile(p)
		if err != nil {
			l.warn("allowed signers: %v (no signature can be verified)", err)
		}
		var errs []error
		v.allowed, errs = refs.SSH.ParseAllowedSigners(data)
		for _, e := range errs {
			l.warn("%s: %v", p, e)
		}
	}
	l.verifier = v
	return v, nil
}

// Verdict is the verdict of the fact id authored by tool: verified when a
// commit that introduced it is signed by a key the allowed-signers file
// lists for tool (for rally's own facts, such as reaped claims, for
// anyone); else unsigned when one of those commits is unsigned (a genuine
// fact from before signing stays unsigned when a forger copies it into a
// commit of their own); else bad. A fact with no record (its commit could
// not be read) is unsigned.
func (v *Verifier) Verdict(id, tool string) string {
	best := ""
	recs := v.vc.find(id)
	if len(recs) == 0 {
		return Unsigned
	}
	for _, r := range recs {
		switch r.state {
		case 'u':
			if best == "" || best == BadSig {
				best = Unsigned
			}
		case 'x':
			if best == "" {
				best = BadSig
			}
		case 'g':
			key, at := v.vc.keys[r.key], time.Unix(r.at, 0)
			ok := false
			switch {
			case v.allowed == nil:
			case tool == facts.SystemTool:
				ok = v.allowed.Lists(key, "git", at)
			default:
				ok = v.allowed.Allows(tool, key, "git", at)
			}
			if ok {
				return Verified
			}
			if best == "" {
				best = BadSig
			}
		}
	}
	return best
}

// Counts counts the verdicts of fs.
func (v *Verifier) Counts(fs []*facts.Fact) map[string]int {
	out := map[string]int{Verified: 0, Unsigned: 0, BadSig: 0}
	for _, f := range fs {
		out[v.Verdict(f.ID, f.Tool)]++
	}
	return out
}

// SignatureCounts counts the verdicts of every fact at the head, the
// facts streamed (Each): doctor with signing configured held them all
// (1.2 GB at a million facts).
func (l *Ledger) SignatureCounts(v *Verifier) (map[string]int, error) {
	out := map[string]int{Verified: 0, Unsigned: 0, BadSig: 0}
	err := l.Each("", "", func(f *facts.Fact) error {
		out[v.Verdict(f.ID, f.Tool)]++
		return nil
	})
	return out, err
}
