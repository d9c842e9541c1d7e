package facts

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/git-rally/git-rally/refs"
)

// LedgerRef is the ref the ledger lives on.
const LedgerRef = "refs/rally/ledger"

// Layout of a ledger commit's tree:
//
//	format                              "git-rally ledger 1"
//	facts/YYYY-MM/DD/NNNN/<id>.json     one fact per blob
//
// The time path is the append's (UTC) date; NNNN is a segment number that
// grows when the newest segment holds segMax facts. Every level stays
// small (months, days, segments of a day), so an append writes a blob,
// five small trees and a commit whatever the ledger's size, and the
// newest segment is always the one an append touches. The segment tree is
// the largest an append rewrites (about 51 bytes a fact, so 13 KB full);
// segments of 64 made it 3 KB but a day's tree 4x longer, and a sync of
// 10,000 facts 2.3 s instead of 1.8 s (more trees to read on fetch).
const (
	FormatFile    = "format"
	FormatContent = "git-rally ledger 1\n"
	factsDir      = "facts"
	segMax        = 256
)

// LayoutDirs are the directories, from the root, of the segments an
// append at now writes into.
func LayoutDirs(now time.Time) []string {
	now = now.UTC()
	return []string{factsDir, now.Format("2006-01"), now.Format("02")}
}

// Ledger reads and appends facts on refs/rally/ledger of one repository.
type Ledger struct {
	Store *refs.Store
	Now   func() time.Time
	cache *cache
	// Warnings collects lines that could not be read, for the caller to
	// show on stderr.
	Warnings []string
	// AutoPack starts a background incremental pack after an append once
	// loose objects pile up (see refs.Store.MaybePack).
	AutoPack bool
	// Signing is the repository's signing configuration (signing.go).
	Signing  Signing
	verifier *Verifier // the last Verifier, at its head
	// Ignored counts the facts the last View left out.
	Ignored int
	trusted *State
	allowed refs.AllowedSigners // the allowed-signers file, read by checkVerdicts
	// mergingTracking is set while MergeTracking runs (its own merge and
	// risk append must not start another).
	mergingTracking bool
	// healing is set while Append heals the ledger before it appends.
	healing      bool
	trackingMemo map[string]string // fetched heads merged (rally/tracking)
	// NoTracking turns off merging fetched ledgers before reads and
	// appends (sync does its own merging).
	NoTracking bool
	// last is the projection this process read or wrote last: a command
	// that resolves an id, checks and appends loads the cache once.
	last *State
}

// Open opens the ledger of the repository whose common dir is given.
func Open(commonDir string, now func() time.Time) (*Ledger, error) {
	return OpenConfig(commonDir, now, refs.ReadConfig(commonDir, ""))
}

// OpenConfig is Open with the repository's configuration already read
// (a command that reads it for other settings reads it once).
func OpenConfig(commonDir string, now func() time.Time, cfg *refs.Config) (*Ledger, error) {
	st, err := refs.Open(commonDir)
	if err != nil {
		return nil, err
	}
	if now == nil {
		now = time.Now
	}
	l := &Ledger{Store: st, Now: now, cache: newCache(commonDir)}
	l.configureSigning(cfg)
	return l, nil
}

// Close releases the store.
func (l *Ledger) Close() error { return l.Store.Close() }

// Head returns the ledger's current commit, zero when there is none.
func (l *Ledger) Head() (refs.Hash, error) { return l.Store.ReadRef(LedgerRef) }

// Read returns the projection at the current head, bringing the cache up
// to date with a tree diff when the ledger moved.
func (l *Ledger) Read() (*State, error) {
	if !l.NoTracking {
		l.MergeTracking()
	}
	head, err := l.Head()
	if err != nil {
		return nil, err
	}
	if l.last != nil && l.last.Head == hashString(head) && !l.last.FutureDue(l.horizon()) {
		return l.last, nil
	}
	if st := l.cache.load(); st != nil && st.Head == hashString(head) && !st.FutureDue(l.horizon()) {
		l.last = st
		return st, nil
	}
	unlock := l.cache.lock()
	defer unlock()
	return l.catchUp(head)
}

func hashString(h refs.Hash) string {
	if h.IsZero() {
		return ""
	}
	return h.String()
}

// catchUp brings the cached state to head. The caller holds the cache lock.
func (l *Ledger) catchUp(head refs.Hash) (*State, error) {
	if l.last != nil && l.last.Head == hashString(head) && !l.last.FutureDue(l.horizon()) {
		return l.last, nil
	}
	st, err := l.catchUpCache(head)
	if err == nil {
		l.last = st
	}
	return st, err
}

// catchUpCache is catchUp without the in-process memo.
func (l *Ledger) catchUpCache(head refs.Hash) (*State, error) {
	hz := l.horizon()
	st := l.cache.load()
	if st0 := st; st != nil && st.FutureDue(hz) {
		// A fact held back as dated in the future is due: build again.
		// Replayed from the checkpoint: the facts since the first one
		// held back, not the whole mirror.
		var ok bool
		if st, ok = l.replayCheckpoint(st0, hz); !ok {
			st = nil
			defer lowGC()()
			if ls, ok := l.cache.mirrorStore(st0); ok {
				if !ls.odd {
					st, _ = l.rebuildInto(ls, hz, st0.Head, st0.Tree)
				}
				ls.release()
			}
		}
	}
	if st != nil && st.Head == hashString(head) {
		return st, nil
	}
	if head.IsZero() {
		st = NewState()
		l.cache.save(st, nil, true)
		return st, nil
	}
	c, err := l.Store.ReadCommit(head)
	if err != nil {
		return nil, fmt.Errorf("reading ledger head: %w", err)
	}
	if st != nil && st.Tree != "" {
		old, _ := refs.ParseHash(st.Tree)
		added, err := l.diff(old, c.Tree)
		if err == nil {
			fs := l.parseBlobs(added)
			cp := st.clone()
			cp.SetHorizon(hz)
			if err := cp.Apply(append([]*Fact(nil), fs...)); err == nil {
				cp.Head, cp.Tree = head.String(), c.Tree.String()
				l.cache.checkpointBefore(st, cp)
				l.cache.saveFrom(st, cp, fs, false)
				return cp, nil
			}
			// Out of order (a merge) or an undo: from the checkpoint
			// when the new facts come after it, else rebuild from the
			// mirror plus the new facts.
			defer lowGC()()
			if nst, ok := l.mergeCheckpoint(st, fs, hz, head.String(), c.Tree.String()); ok {
				return nst, nil
			}
			if ls, ok := l.cache.mirrorStore(st); ok {
				for i, f := range fs {
					ls.add(f, 1<<62|uint64(i))
				}
				if !ls.odd {
					if nst, err := l.rebuildInto(ls, hz, head.String(), c.Tree.String()); err == nil {
						return nst, nil
					}
				}
				ls.release()
			}
		}
	}
	nw := len(l.Warnings)
	defer lowGC()()
	ls, err := l.readStore(c.Tree)
	if err != nil {
		return nil, err
	}
	if !ls.odd {
		if nst, err := l.rebuildInto(ls, hz, head.String(), c.Tree.String()); err == nil {
			return nst, nil
		}
	}
	ls.release()
	// Not reached with facts this version checked: the old way.
	l.Warnings = l.Warnings[:nw]
	all, err := l.readAll(c.Tree)
	if err != nil {
		return nil, err
	}
	all = dedupe(all)
	nst := BuildAt(all, hz)
	nst.Head, nst.Tree = head.String(), c.Tree.String()
	l.cache.save(nst, all, true)
	return nst, nil
}

// horizon is the reader's clock plus FutureSkew: a fact dated later is
// held back (State.Future).
func (l *Ledger) horizon() time.Time { return l.Now().UTC().Add(FutureSkew) }

func dedupe(fs []*Fact) []*Fact {
	seen := make(map[string]bool, len(fs))
	out := fs[:0]
	for _, f := range fs {
		if !seen[f.ID] {
			seen[f.ID] = true
			out = append(out, f)
		}
	}
	return out
}

// blobRef is a fact blob found in a tree.
type blobRef struct {
	path string
	hash refs.Hash
}

// diff lists the blobs in newT that are not in oldT, descending only into
// subtrees whose ids differ.
func (l *Ledger) diff(oldT, newT refs.Hash) ([]blobRef, error) {
	var out []blobRef
	shrank := false
	var walk func(prefix string, o, n refs.Hash) error
	walk = func(prefix string, o, n refs.Hash) error {
		if o == n {
			return nil
		}
		ne, err := l.readTree(n)
		if err != nil {
			return err
		}
		var oe []refs.Entry
		if !o.IsZero() {
			if oe, err = l.readTree(o); err != nil {
				return err
			}
		}
		old := make(map[string]refs.Entry, len(oe))
		for _, e := range oe {
			old[e.Name] = e
		}
		if len(oe) > 0 {
			names := make(map[string]bool, len(ne))
			for _, e := range ne {
				names[e.Name] = true
			}
			for _, e := range oe {
				if !names[e.Name] {
					shrank = true
				}
			}
		}
		for _, e := range ne {
			p := joinPath(prefix, e.Name)
			oldE, had := old[e.Name]
			if e.Dir {
				var ot refs.Hash
				if had && oldE.Dir {
					ot = oldE.Hash
				}
				if err := walk(p, ot, e.Hash); err != nil {
					return err
				}
				continue
			}
			if had && oldE.Hash == e.Hash {
				continue
			}
			if had {
				shrank = true // a fact file whose content changed
			}
			if isFactPath(p) {
				out = append(out, blobRef{p, e.Hash})
			}
		}
		return nil
	}
	err := walk("", oldT, newT)
	if err == nil && shrank {
		err = errShrank
	}
	return out, err
}

// errShrank reports that the new tree lacks something the old one held:
// the ledger ref was moved back or rewritten by hand. The caller gets the
// added blobs too, but a projection must be rebuilt from scratch.
var errShrank = errors.New("ledger lost facts since the last read")

func joinPath(a, b string) string {
	if a == "" {
		return b
	}
	return a + "/" + b
}

func isFactPath(p string) bool {
	return strings.HasPrefix(p, factsDir+"/") && strings.HasSuffix(p, ".json")
}

func (l *Ledger) readTree(h refs.Hash) ([]refs.Entry, error) {
	if es, ok := l.cache.tree(h); ok {
		return es, nil
	}
	es, err := l.Store.ReadTree(h)
	if err == nil {
		l.cache.remember(h, es)
	}
	return slices.Clip(es), err
}

// readAll returns every fact under a tree.
func (l *Ledger) readAll(tree refs.Hash) ([]*Fact, error) {
	refsList, err := l.diff(refs.ZeroHash, tree)
	if err != nil {
		return nil, err
	}
	return l.parseBlobs(refsList), nil
}

func (l *Ledger) parseBlobs(bs []blobRef) []*Fact {
	parsed := make([][]*Fact, len(bs))
	warns := make([][]string, len(bs))
	collect := func() []*Fact {
		n := 0
		for i := range parsed {
			n += len(parsed[i])
		}
		out := make([]*Fact, 0, n)
		for i := range bs {
			out = append(out, parsed[i]...)
			l.Warnings = append(l.Warnings, warns[i]...)
		}
		return out
	}
	if len(bs) >= refs.BatchThreshold {
		// One git cat-file streams the blobs; decoding and checking
		// them, CPU work, runs on the other cores meanwhile.
		type job struct {
			i    int
			data []byte
		}
		jobs := make(chan job, 256)
		var wg sync.WaitGroup
		for w := 0; w < max(1, runtime.GOMAXPROCS(0)); w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range jobs {
					parsed[j.i], warns[j.i] = parseBlob(bs[j.i].path, j.data)
				}
			}()
		}
		hs := make([]refs.Hash, len(bs))
		for i, b := range bs {
			hs[i] = b.hash
		}
		err := l.Store.StreamBlobs(hs, func(i int, data []byte) { jobs <- job{i, data} })
		close(jobs)
		wg.Wait()
		if err == nil {
			return collect()
		}
		// On error, fall back to one by one.
	}
	for i, b := range bs {
		data, err := l.Store.ReadBlob(b.hash)
		if err != nil {
			parsed[i], warns[i] = nil, []string{fmt.Sprintf("%s: %v", b.path, err)}
			continue
		}
		parsed[i], warns[i] = parseBlob(b.path, data)
	}
	return collect()
}

// parseBlob reads the facts of one blob, skipping (with a warning each)
// lines that do not parse and facts that are corrupt: those are kept in
// the ledger and synced unchanged, never believed: they shadow, replace or
// close nothing.
// cutLine splits the first line off b: the line without its newline, the
// rest, and whether a newline ended the line.
func cutLine(b []byte) (line, rest []byte, nl bool) {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i], b[i+1:], true
	}
	return b, nil, false
}

func parseBlob(path string, data []byte) ([]*Fact, []string) {
	return parseBlobRaw(path, data, false)
}

// parseBlobRaw is parseBlob; with alias, a fact's Raw is its line in data
// when a newline ends it there (the caller owns data and keeps it as is).
func parseBlobRaw(path string, data []byte, alias bool) ([]*Fact, []string) {
	if w, ok := oversizeWarning(path, data); ok {
		return nil, []string{w}
	}
	var out []*Fact
	var warns []string
	for rest := data; len(rest) > 0; {
		var line []byte
		var nl bool
		line, rest, nl = cutLine(rest)
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var c *Corrupt
		f, ms, ok := fastDecode(line)
		if ok && f.ID != "" && f.Kind != "" {
			// A canonical line: decoded and hashed without encoding/json.
			if alias && nl {
				f.Raw = line[: len(line)+1 : len(line)+1]
			} else {
				f.Raw = append(make([]byte, 0, len(line)+1), line...)
				f.Raw = append(f.Raw, '\n')
			}
			c = checkStoredID(f, fastID(line, &ms), nil, baseName(path))
		} else {
			var err error
			if f, err = Parse(line); err != nil {
				warns = append(warns, fmt.Sprintf("skipping unreadable line in %s: %v", Sanitize(path, 200), err))
				continue
			}
			c = checkStored(f, line, baseName(path))
		}
		if c != nil {
			warns = append(warns, fmt.Sprintf("skipping corrupt fact in %s: %s: %s", Sanitize(path, 200), c.Code, c.Message))
			continue
		}
		out = append(out, f)
	}
	return out, warns
}

func (l *Ledger) warn(format string, a ...any) {
	l.Warnings = append(l.Warnings, fmt.Sprintf(format, a...))
}

// AppendFunc decides, under the ledger lock and against the current state,
// what to write. It returns the facts (without id, time or clock) or an
// error to refuse the write.
type AppendFunc func(st *State, now time.Time) ([]*Fact, error)

// Append writes facts as one commit on the ledger. fn runs inside the
// critical section: the ref lock is held and the state is the projection of
// the tip the new commit will have as its parent, so a rule it checks
// cannot be invalidated by a concurrent writer. Nothing is written when fn
// or validation fails.
func (l *Ledger) Append(fn AppendFunc) ([]*Fact, error) {
	if err := l.checkCanWrite(false); err != nil {
		return nil, err
	}
	if !l.NoTracking {
		l.MergeTracking()
	}
	lock, err := l.Store.LockRef(LedgerRef)
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	if !lock.Old.IsZero() && !l.healing && !l.Store.HasObject(lock.Old) {
		// A prune took the head's commit: write the facts back first
		// (one object looked up per append; doctor --repair and sync
		// check the whole history).
		lock.Unlock()
		l.healing = true
		_, err := l.Heal()
		if err == nil {
			var fs []*Fact
			fs, err = l.Append(fn)
			l.healing = false
			return fs, err
		}
		l.healing = false
		return nil, historyFailure(err)
	}
	if lock.RemovedStale {
		l.warn("removed a stale %s.lock left by a killed process", LedgerRef)
	}
	unlock := l.cache.lock()
	defer unlock()
	st, err := l.catchUp(lock.Old)
	if err != nil {
		return nil, err
	}
	now := l.Now().UTC()
	vst, err := l.view(st)
	if err != nil {
		return nil, err
	}
	fs, err := fn(vst, now)
	if err != nil {
		return nil, err
	}
	if len(fs) == 0 {
		return nil, nil
	}
	if err := l.checkCanWrite(true); err != nil {
		return nil, err
	}
	if err := l.checkVerdicts(fs, now); err != nil {
		return nil, err
	}
	for i, f := range fs {
		f.V = 1
		if f.At == "" {
			f.At = FormatTime(now)
		}
		f.Clock = st.MaxClock + 1 + int64(i)
		if f.Access == "" && f.Kind == KindClaim {
			f.Access = Exclusive
		}
		if err := f.Validate(); err != nil {
			return nil, err
		}
		f.Seal()
	}
	// The state is at lock.Old, so its tree is the parent's: no object read.
	var parentTree refs.Hash
	if !lock.Old.IsZero() {
		if st.Head != lock.Old.String() {
			return nil, fmt.Errorf("internal: projection at %s, ledger at %s", st.Head, lock.Old)
		}
		if parentTree, err = refs.ParseHash(st.Tree); err != nil {
			c, err := l.Store.ReadCommit(lock.Old)
			if err != nil {
				return nil, fmt.Errorf("reading ledger head: %w", err)
			}
			parentTree = c.Tree
		}
	}
	tree, err := l.addFacts(parentTree, now, fs)
	if err != nil {
		return nil, err
	}
	var parents []refs.Hash
	if !lock.Old.IsZero() {
		parents = []refs.Hash{lock.Old}
	}
	commit, err := l.Store.WriteCommit(refs.Commit{Tree: tree, Parents: parents, Message: message(fs), When: now})
	if err != nil {
		return nil, err
	}
	if err := lock.Commit(commit); err != nil {
		return nil, err
	}
	// The ref has moved: a prune that read the refs before may still
	// delete the objects it now needs. Other writers may go on meanwhile.
	lock.Unlock()
	if err := l.Store.Ensure(); err != nil {
		return nil, fmt.Errorf("fact recorded, but its objects could not be checked: %w", err)
	}
	// The facts are acknowledged from here on; the cache is disposable.
	cp := st.clone()
	cp.SetHorizon(l.horizon())
	if cp.Apply(append([]*Fact(nil), fs...)) == nil {
		cp.Head, cp.Tree = commit.String(), tree.String()
		l.cache.checkpointBefore(st, cp)
		l.cache.saveFrom(st, cp, fs, false)
		l.last = cp
	}
	if l.AutoPack {
		if _, err := l.Store.MaybePack(); err != nil {
			// The facts are recorded; their objects stay loose.
			l.Warnings = append(l.Warnings, fmt.Sprintf("the ledger's objects were not packed: %v", err))
		}
	}
	return fs, nil
}

func message(fs []*Fact) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.Summary()
	}
	m := strings.Join(parts, "; ")
	m = CutWords(m, 197)
	return m + "\n"
}

// addFacts writes the fact blobs into the newest segment of the time path
// and rewrites the trees above it. root may be zero for a new ledger.
func (l *Ledger) addFacts(root refs.Hash, now time.Time, fs []*Fact) (refs.Hash, error) {
	dirs := LayoutDirs(now)
	// levels[i] holds the entries of the tree at depth i along the path:
	// root, facts, month, day.
	levels := make([][]refs.Entry, len(dirs)+1)
	cur := root
	for i := 0; i <= len(dirs); i++ {
		if !cur.IsZero() {
			es, err := l.readTree(cur)
			if err != nil {
				return refs.ZeroHash, err
			}
			levels[i] = es
		}
		if i == len(dirs) {
			break
		}
		cur = refs.ZeroHash
		for _, e := range levels[i] {
			if e.Name == dirs[i] && e.Dir {
				cur = e.Hash
			}
		}
	}
	// Pick the segment: the newest one unless it is full.
	day := levels[len(dirs)]
	seg, segNum := refs.ZeroHash, 0
	for _, e := range day {
		if n, ok := segmentNumber(e.Name); ok && e.Dir && n >= segNum {
			seg, segNum = e.Hash, n
		}
	}
	var segEntries []refs.Entry
	if !seg.IsZero() {
		es, err := l.readTree(seg)
		if err != nil {
			return refs.ZeroHash, err
		}
		segEntries = es
		if len(es)+len(fs) > segMax {
			segEntries, segNum = nil, segNum+1
		}
	}
	for _, f := range fs {
		h, err := l.Store.WriteBlob(f.Raw)
		if err != nil {
			return refs.ZeroHash, err
		}
		segEntries = append(segEntries, refs.Entry{Name: f.ID + ".json", Hash: h})
	}
	child, err := l.writeTree(segEntries)
	if err != nil {
		return refs.ZeroHash, err
	}
	name := fmt.Sprintf("%04d", segNum)
	for i := len(dirs); i >= 0; i-- {
		es := replaceEntry(levels[i], refs.Entry{Name: name, Dir: true, Hash: child})
		if i == 0 && !hasEntry(es, FormatFile) {
			fh, err := l.Store.WriteBlob([]byte(FormatContent))
			if err != nil {
				return refs.ZeroHash, err
			}
			es = append(es, refs.Entry{Name: FormatFile, Hash: fh})
		}
		if child, err = l.writeTree(es); err != nil {
			return refs.ZeroHash, err
		}
		if i > 0 {
			name = dirs[i-1]
		}
	}
	return child, nil
}

// segmentNumber reads a segment's name as fmt.Sscanf's %d read it: an
// leading blanks, an optional sign, then decimal digits ("0007" is 7).
func segmentNumber(name string) (int, bool) {
	i := 0
	for i < len(name) && (name[i] == ' ' || name[i] == '\t' || name[i] == '\r') {
		i++
	}
	start := i
	if i < len(name) && (name[i] == '+' || name[i] == '-') {
		i++
	}
	j := i
	for j < len(name) && name[j] >= '0' && name[j] <= '9' {
		j++
	}
	if j == i {
		return 0, false
	}
	n, err := strconv.Atoi(name[start:j])
	return n, err == nil
}

// writeTree writes a tree of es and remembers its entries. The tree cache
// keeps a sorted copy of its own: es may share its array with entries
// remembered for another tree (a segment's entries plus one), and sorting
// es in place would rewrite that tree's entries.
func (l *Ledger) writeTree(es []refs.Entry) (refs.Hash, error) {
	h, err := l.Store.WriteTree(es)
	if err == nil {
		own := slices.Clone(es)
		sort.Slice(own, func(i, j int) bool { return own[i].Name < own[j].Name })
		l.cache.remember(h, own)
	}
	return h, err
}

func replaceEntry(es []refs.Entry, e refs.Entry) []refs.Entry {
	out := make([]refs.Entry, 0, len(es)+1)
	for _, x := range es {
		if x.Name != e.Name {
			out = append(out, x)
		}
	}
	return append(out, e)
}

func hasEntry(es []refs.Entry, name string) bool {
	for _, e := range es {
		if e.Name == name {
			return true
		}
	}
	return false
}

// Init writes the ledger's root commit (only the format marker) when there
// is no ledger yet. It reports whether it wrote one.
func (l *Ledger) Init() (bool, error) {
	lock, err := l.Store.LockRef(LedgerRef)
	if err != nil {
		return false, err
	}
	defer lock.Unlock()
	if !lock.Old.IsZero() {
		return false, nil
	}
	if err := l.checkCanWrite(false); err != nil {
		return false, err
	}
	fh, err := l.Store.WriteBlob([]byte(FormatContent))
	if err != nil {
		return false, err
	}
	tree, err := l.writeTree([]refs.Entry{{Name: FormatFile, Hash: fh}})
	if err != nil {
		return false, err
	}
	c, err := l.Store.WriteCommit(refs.Commit{Tree: tree, Message: "init rally ledger\n", When: l.Now().UTC()})
	if err != nil {
		return false, err
	}
	if err := lock.Commit(c); err != nil {
		return false, err
	}
	lock.Unlock()
	return true, l.Store.Ensure()
}

// ErrNoFact is returned when no fact has the given id.
var ErrNoFact = errors.New("no such fact")

// All returns every fact of the current head in (clock, id) order.
func (l *Ledger) All() ([]*Fact, error) {
	st, err := l.Read()
	if err != nil {
		return nil, err
	}
	if st.Head == "" {
		return nil, nil
	}
	if fs, ok := l.cache.mirror(st); ok {
		SortFacts(fs)
		return fs, nil
	}
	h, _ := refs.ParseHash(st.Tree)
	fs, err := l.readAll(h)
	if err != nil {
		return nil, err
	}
	fs = dedupe(fs)
	SortFacts(fs)
	return fs, nil
}

// Find resolves an id or a unique prefix of at least 6 characters (with or
// without the f_).
func (l *Ledger) Find(prefix string) (*Fact, error) {
	p := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(prefix)), "f_")
	if len(p) < 6 || strings.Trim(p, "0123456789abcdef") != "" {
		return nil, &UsageError{Msg: fmt.Sprintf("bad fact id %q: want f_ and at least 6 hex digits", prefix),
			Hint: "git rally log --json"}
	}
	found, err := l.findPrefix("f_" + p)
	if err != nil {
		return nil, err
	}
	switch len(found) {
	case 0:
		return nil, &NotFoundError{ID: prefix}
	case 1:
		return found[0], nil
	}
	return nil, &UsageError{Msg: fmt.Sprintf("fact id %q is ambiguous: %d facts match", prefix, len(found)),
		Hint: "give more characters of the id"}
}

// NotFoundError reports an unknown fact id (exit 2: it is the caller's input).
type NotFoundError struct{ ID string }

func (e *NotFoundError) Error() string { return fmt.Sprintf("no fact with id %q", e.ID) }

type refHash = refs.Hash

var refHashZero = refs.ZeroHash

// findPrefix returns the facts whose id starts with prefix. It scans the
// mirror's raw lines and decodes only the candidates, so resolving an id
// costs a byte scan, not a decode of the whole ledger.
func (l *Ledger) findPrefix(prefix string) ([]*Fact, error) {
	st, err := l.Read()
	if err != nil {
		return nil, err
	}
	if found, ok := l.cache.indexPrefix(st, prefix); ok {
		return found, nil
	}
	var found []*Fact
	if data, ok := l.cache.mirrorBytes(st); ok {
		needle := []byte(prefix) // may also hit a ref; the decode below checks the id
		for len(data) > 0 {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				break
			}
			line := data[:i]
			data = data[i+1:]
			if !bytes.Contains(line, needle) {
				continue
			}
			linesDecoded.Add(1)
			if f, err := Parse(line); err == nil && strings.HasPrefix(f.ID, prefix) {
				found = append(found, f)
			}
		}
		return found, nil
	}
	all, err := l.All()
	if err != nil {
		return nil, err
	}
	for _, f := range all {
		if strings.HasPrefix(f.ID, prefix) {
			found = append(found, f)
		}
	}
	return found, nil
}
