package ledger

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// Append writes facts as one commit on the ledger. fn runs inside the
// critical section: the ref lock is held and the state is the projection of
// the tip the new commit will have as its parent, so a rule it checks
// cannot be invalidated by a concurrent writer. Nothing is written when fn
// or validation fails.
func (l *Ledger) Append(fn facts.AppendFunc) ([]*facts.Fact, error) {
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
			var fs []*facts.Fact
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
			f.At = facts.FormatTime(now)
		}
		f.Clock = st.MaxClock + 1 + int64(i)
		if f.Access == "" && f.Kind == facts.KindClaim {
			f.Access = facts.Exclusive
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
	l.linesAt = st // a segment blob's lines come from its mirror first
	tree, err := l.addFacts(parentTree, now, fs)
	l.linesAt = nil
	if err != nil {
		return nil, err
	}
	var parents []refs.Hash
	if !lock.Old.IsZero() {
		parents = []refs.Hash{lock.Old}
	}
	commit, err := l.commitLocked(lock, refs.Commit{Tree: tree, Parents: parents, Message: message(fs), When: now}, "fact recorded, but its objects")
	if err != nil {
		return nil, err
	}
	// The facts are acknowledged from here on; the cache is disposable.
	cp := st.Clone()
	cp.SetHorizon(l.horizon())
	if cp.Apply(append([]*facts.Fact(nil), fs...)) == nil {
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

// commitLocked writes c and moves the ledger ref that lock holds to it,
// then releases the lock and makes the store keep c's objects: once the
// ref has moved, a prune that read the refs before may still delete the
// objects it now needs (other writers may go on meanwhile). what begins
// the error when that check fails ("fact recorded, but its objects").
func (l *Ledger) commitLocked(lock *refs.RefLock, c refs.Commit, what string) (refs.Hash, error) {
	commit, err := l.Store.WriteCommit(c)
	if err != nil {
		return refs.ZeroHash, err
	}
	if err := lock.Commit(commit); err != nil {
		return refs.ZeroHash, err
	}
	lock.Unlock()
	if err := l.Store.Ensure(); err != nil {
		return refs.ZeroHash, fmt.Errorf("%s could not be checked: %w", what, err)
	}
	return commit, nil
}

func message(fs []*facts.Fact) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.Summary()
	}
	m := strings.Join(parts, "; ")
	m = facts.CutWords(m, 197)
	return m + "\n"
}

// addFacts writes the fact blobs into the newest segment of the time path
// and rewrites the trees above it. root may be zero for a new ledger.
func (l *Ledger) addFacts(root refs.Hash, now time.Time, fs []*facts.Fact) (refs.Hash, error) {
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
	seg, segNum, segName := refs.ZeroHash, 0, ""
	for _, e := range day {
		if n, ok := segmentNumber(e.Name); ok && e.Dir && n >= segNum {
			seg, segNum, segName = e.Hash, n, e.Name
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
			// The segment is closed (no append writes to it again): its
			// segment blob goes in with this commit.
			if !l.noSeal {
				if levels[len(dirs)], err = l.sealSegment(day, segName, es); err != nil {
					return refs.ZeroHash, err
				}
			}
			segEntries, segNum = nil, segNum+1
		}
	} else if len(day) == 0 && len(levels[1]) > 0 && !l.noSeal {
		// A new day: the newest day before it is closed, and so is its
		// last segment.
		if err := l.sealLastDay(levels, dirs); err != nil {
			return refs.ZeroHash, err
		}
	}
	mine := make(map[refs.Hash][]byte, len(fs))
	for _, f := range fs {
		h, err := l.Store.WriteBlob(f.Raw)
		if err != nil {
			return refs.ZeroHash, err
		}
		mine[h] = f.Raw
		segEntries = append(segEntries, refs.Entry{Name: f.ID + ".json", Hash: h})
	}
	child, err := l.writeTree(segEntries)
	if err != nil {
		return refs.ZeroHash, err
	}
	name := fmt.Sprintf("%04d", segNum)
	// The append that fills a segment writes its segment blob
	// (segment.go): once per segMax facts, reading the segment's blobs.
	// A segment blob of a segment that gains facts and is not full (one
	// sealed when its day ended, written to by a clock behind) goes.
	var segBlob *refs.Entry
	if len(segEntries) >= segMax {
		if data, ok := l.segmentBlobOf(segEntries, mine); ok {
			h, err := l.Store.WriteBlob(data)
			if err != nil {
				return refs.ZeroHash, err
			}
			segBlob = &refs.Entry{Name: name + segBlobExt, Hash: h}
		}
	}
	if segBlob == nil {
		levels[len(dirs)] = removeEntry(levels[len(dirs)], name+segBlobExt)
	}
	for i := len(dirs); i >= 0; i-- {
		es := replaceEntry(levels[i], refs.Entry{Name: name, Dir: true, Hash: child})
		if i == len(dirs) && segBlob != nil {
			es = replaceEntry(es, *segBlob)
		}
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

func removeEntry(es []refs.Entry, name string) []refs.Entry {
	if !hasEntry(es, name) {
		return es
	}
	out := make([]refs.Entry, 0, len(es))
	for _, x := range es {
		if x.Name != name {
			out = append(out, x)
		}
	}
	return out
}

// sealSegment returns the entries of a day tree with the segment blob of
// its closed segment name (whose entries are es) added, unless it has
// one already or the segment cannot have one (segmentBlobOf).
func (l *Ledger) sealSegment(day []refs.Entry, name string, es []refs.Entry) ([]refs.Entry, error) {
	if hasEntry(day, name+segBlobExt) {
		return day, nil
	}
	data, ok := l.segmentBlobOf(es, nil)
	if !ok {
		return day, nil
	}
	h, err := l.Store.WriteBlob(data)
	if err != nil {
		return nil, err
	}
	return replaceEntry(day, refs.Entry{Name: name + segBlobExt, Hash: h}), nil
}

// sealLastDay seals the last segment of the newest day before dirs' day
// (in its month, else in the newest month before), the day an append to
// a new day closes, rewriting the month tree in levels (and the facts
// tree when the day is in an earlier month).
func (l *Ledger) sealLastDay(levels [][]refs.Entry, dirs []string) error {
	newest := func(es []refs.Entry, before string) (refs.Entry, bool) {
		var best refs.Entry
		found := false
		for _, e := range es {
			if e.Dir && (before == "" || e.Name < before) && (!found || e.Name > best.Name) {
				best, found = e, true
			}
		}
		return best, found
	}
	at := 2 // the level holding the day: the month's tree
	month := levels[2]
	d, ok := newest(month, dirs[2])
	var m refs.Entry
	if !ok {
		if m, ok = newest(levels[1], dirs[1]); !ok {
			return nil
		}
		es, err := l.readTree(m.Hash)
		if err != nil {
			return err
		}
		if d, ok = newest(es, ""); !ok {
			return nil
		}
		at, month = 1, es
	}
	day, err := l.readTree(d.Hash)
	if err != nil {
		return err
	}
	seg, segNum, segName := refs.ZeroHash, -1, ""
	for _, e := range day {
		if n, ok := segmentNumber(e.Name); ok && e.Dir && n >= segNum {
			seg, segNum, segName = e.Hash, n, e.Name
		}
	}
	if seg.IsZero() || hasEntry(day, segName+segBlobExt) {
		return nil
	}
	es, err := l.readTree(seg)
	if err != nil {
		return err
	}
	sealed, err := l.sealSegment(day, segName, es)
	if err != nil || len(sealed) == len(day) {
		return err
	}
	dh, err := l.writeTree(sealed)
	if err != nil {
		return err
	}
	month = replaceEntry(month, refs.Entry{Name: d.Name, Dir: true, Hash: dh})
	if at == 2 {
		levels[2] = month
		return nil
	}
	mh, err := l.writeTree(month)
	if err != nil {
		return err
	}
	levels[1] = replaceEntry(levels[1], refs.Entry{Name: m.Name, Dir: true, Hash: mh})
	return nil
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

// segmentBlobOf returns the segment blob of a closed segment of entries, the
// contents of some of them in mine (an append's new facts), the others
// read. A blob that cannot be read leaves the segment without one.
func (l *Ledger) segmentBlobOf(entries []refs.Entry, mine map[refs.Hash][]byte) ([]byte, bool) {
	names := make([]string, len(entries))
	contents := make([][]byte, len(entries))
	var read []refs.Hash
	var at []int
	for i, e := range entries {
		if e.Dir {
			return nil, false
		}
		names[i] = e.Name
		if raw, ok := mine[e.Hash]; ok {
			contents[i] = raw
			continue
		}
		read, at = append(read, e.Hash), append(at, i)
	}
	if len(read) > 0 && l.linesAt != nil {
		// The segment's facts are among the newest: their lines from the
		// mirror's end, each checked against its blob id. Read from a
		// pack in-process, they would load its index (70 MB at a million
		// facts) once every segMax appends.
		got := l.mirrorLines(l.linesAt, read)
		left, leftAt := read[:0:0], at[:0:0]
		for k, h := range read {
			if line, ok := got[h]; ok {
				contents[at[k]] = line
			} else {
				left, leftAt = append(left, h), append(leftAt, at[k])
			}
		}
		read, at = left, leftAt
	}
	data, err := l.Store.ReadBlobs(read)
	if err != nil {
		return nil, false
	}
	for k, i := range at {
		contents[i] = data[k]
	}
	return SealBlob(names, contents)
}

// mirrorLines returns the lines of the mirror at st, among its last
// 4*segMax, whose blob ids are in hs, by blob id.
func (l *Ledger) mirrorLines(st *facts.State, hs []refs.Hash) map[refs.Hash][]byte {
	out := map[refs.Hash][]byte{}
	ix, ok := l.cache.openIndex(st)
	if !ok {
		return out
	}
	defer ix.Close()
	want := make(map[refs.Hash]bool, len(hs))
	for _, h := range hs {
		want[h] = true
	}
	o := refs.NewObjectHasher()
	seen := 0
	ix.scan(true, func(r indexRec) bool {
		seen++
		line := make([]byte, r.n)
		if _, err := ix.mirror.ReadAt(line, r.start); err != nil {
			return false
		}
		if h := o.BlobID(line); want[h] {
			out[h] = line
		}
		return len(out) < len(want) && seen < 4*segMax
	})
	return out
}
