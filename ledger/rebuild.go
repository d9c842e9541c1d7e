package ledger

import (
	"bytes"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// A rebuild projects every fact of a ledger from scratch without holding
// them: each fact is decoded and checked once, its stored line copied
// into an arena of plain bytes and a small key (clock, id, where its line
// is) kept. The keys are sorted, and the lines are read back in (clock,
// id) order: written to the new mirror and decoded again, one at a time,
// into the projection. Memory is the ledger's text plus 40 bytes a fact,
// not 100k Fact structs and their strings.

// project builds the projection of the stored facts for a reader whose
// horizon is hz, exactly as BuildAt does on the same facts, and calls
// emit with each line and its fact in (clock, id) order. It returns
// errRebuild when a stored line does not decode again (a bug).
func (ls *lineStore) project(hz time.Time, emit func(line []byte, f *facts.Fact)) (*facts.State, error) {
	return ls.projectFrom(nil, hz, emit)
}

// projectFrom is project on top of a checkpoint's projection cp (nil:
// from nothing), the stored facts being the ones after it. A retraction
// whose target is not among them is believed to retract nothing only
// when the checkpoint says so (cp.ignore); otherwise it returns
// errRebuild: its target may be before the checkpoint.
func (ls *lineStore) projectFrom(cp *checkpoint, hz time.Time, emit func(line []byte, f *facts.Fact)) (*facts.State, error) {
	ls.sortUnique()
	s := facts.NewState()
	var cps checkpointPoints
	if cp != nil {
		s = cp.st
		// Retractions the checkpoint knows count for nothing; those
		// before this tail never come again.
		for id := range cp.ignore {
			cps.ignored(id, lineKey{clock: math.MaxInt64})
		}
	}
	s.SetHorizon(hz)
	if len(ls.retracts) > 0 {
		// BuildAt's first pass: a retraction counts when its target
		// exists and has its author; the first one in order wins.
		want := map[uint64]string{}
		for _, r := range ls.retracts {
			if id, ok := parseFactID(r.ref); ok {
				want[id] = ""
			}
		}
		found := map[uint64]bool{}
		for _, k := range ls.keys {
			if _, ok := want[k.id]; ok {
				f, err := facts.Parse(ls.line(k))
				if err != nil {
					return nil, facts.ErrRebuild
				}
				want[k.id], found[k.id] = f.Tool, true
			}
		}
		rs := ls.retracts
		slices.SortFunc(rs, func(a, b retractRef) int { return a.key.cmp(b.key) })
		// After a checkpoint, State.Retraction holds the retractions the
		// rebuild that took it knew, these facts' too: a retraction here
		// of a fact before the checkpoint must be one of them.
		here := map[string]bool{}
		if cp != nil {
			for _, r := range rs {
				here[r.id] = true
			}
		}
		decided := map[string]bool{}
		for _, r := range rs {
			id, ok := parseFactID(r.ref)
			if ok && !found[id] {
				// A retraction of nothing here: of nothing at all in a
				// rebuild, of a fact before it after a checkpoint.
				if cp != nil && s.Retraction[r.ref] != r.id && !cp.ignore[r.id] {
					return nil, facts.ErrRebuild
				}
				if s.Retraction[r.ref] != r.id {
					cps.ignored(r.id, r.key)
				}
				continue
			}
			if !ok || want[id] != r.tool || decided[r.ref] {
				cps.ignored(r.id, r.key) // counts for nothing
				continue
			}
			decided[r.ref] = true
			if x, known := s.Retraction[r.ref]; !known || here[x] {
				s.Retraction[r.ref] = r.id // the first one in order
			} else {
				cps.ignored(r.id, r.key)
			}
		}
	}
	// The lines are decoded again on the other cores, a batch at a time
	// and a few batches ahead, each into a Fact of a batch reused for the
	// batches after it (strings over the stored line: decodeShared); they
	// are applied here, in order, and copied only where the projection
	// keeps them (State.ApplyBuiltShared). A fresh Fact and line a fact
	// was 638 MB allocated of a cold read of 1M facts.
	const batch = 512
	// A batch's facts: decoded over their lines (fs), or their own copy
	// (owned: one a projection keeps whatever it holds, facts.Kept, or a
	// line decodeShared did not take).
	type facts512 struct {
		fs    [batch]facts.Fact
		owned [batch]*facts.Fact
		lines [batch][]byte // read once: a spilled chunk is not read again for them
	}
	type decoded struct {
		fs  *facts512
		bad bool
	}
	nb := (len(ls.keys) + batch - 1) / batch
	procs := max(1, runtime.GOMAXPROCS(0))
	order := make(chan chan decoded, 2*procs)
	free := make(chan *facts512, 2*procs+procs+2)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer close(order)
		sem := make(chan struct{}, procs)
		for b := 0; b < nb; b++ {
			ks := ls.keys[b*batch : min(len(ls.keys), (b+1)*batch)]
			out := make(chan decoded, 1)
			select {
			case order <- out:
			case <-stop:
				return
			}
			sem <- struct{}{}
			go func() {
				defer func() { <-sem }()
				var d decoded
				select {
				case d.fs = <-free:
				default:
					d.fs = new(facts512)
				}
				var ms facts.FastMembers
				for i, k := range ks {
					line := ls.line(k)
					d.fs.lines[i] = line
					if decodeShared(&d.fs.fs[i], &ms, line) && !facts.Kept(&d.fs.fs[i]) {
						continue
					}
					f, err := parseOwned(line)
					if err != nil {
						d.bad = true
						break
					}
					d.fs.owned[i] = f
				}
				out <- d
			}()
		}
	}()
	var ownErr error
	var line []byte
	own := func() *facts.Fact {
		g, err := parseOwned(line)
		if err != nil {
			ownErr = err // decodeShared took it: never
			return &facts.Fact{}
		}
		return g
	}
	b := 0
	for out := range order {
		d := <-out
		if d.bad {
			return nil, facts.ErrRebuild
		}
		for i := range min(batch, len(ls.keys)-b*batch) {
			k := ls.keys[b*batch+i]
			line = d.fs.lines[i]
			f, shared := d.fs.owned[i], false
			if f == nil {
				f, shared = &d.fs.fs[i], true
			}
			d.fs.owned[i], d.fs.lines[i] = nil, nil
			if ls.pos != nil {
				ls.checkpointAt(&cps, s, k, heldAt(f, hz))
			}
			emit(line, f)
			if shared {
				s.ApplyBuiltShared(f, own)
			} else {
				s.ApplyBuilt(f)
			}
		}
		if ownErr != nil {
			return nil, facts.ErrRebuild
		}
		select {
		case free <- d.fs:
		default:
		}
		b++
	}
	if ls.spill != nil && ls.spill.failed {
		return nil, facts.ErrRebuild
	}
	s.Forget()
	return s, nil
}

// factBlob is a fact blob of a rebuild: its directory (shared by the
// blobs of a segment), its name and its blob id, in 40 bytes. A name
// that is a fact id and .json, as every name rally writes, is kept as the
// id's number; any other in the list's odd names (odd is 1 + its index).
// With the name as a string over a page of names, a million blobs took
// 79 MB, held through the whole first pass of a cold read.
type factBlob struct {
	dir  *string
	id   uint64
	hash refs.Hash
	odd  uint32
}

// factList lists the fact blobs of a tree in the order ls-tree gives.
// It grows while the blobs already listed are read and decoded on other
// goroutines, which look blobs up without a lock: the pages never move,
// the page list is published anew (atomically) when it grows, and a
// blob's index reaches a reader only after the blob is written (through
// the stream's channels). Listing 100k blobs copies none of them again.
type factList struct {
	pages atomic.Pointer[[]*[blobPage]factBlob]
	n     int // the lister's
	dir   *string
	oddMu sync.Mutex
	odds  []string
	// segs are the tree ids of the segments listed as one unit, their
	// segment blob (a factBlob whose odd has segUnit set, its index
	// here; its dir is the segment's path).
	segs []refs.Hash
	// segBlobs are the segment blobs listFacts saw, and segTrees the
	// segments' trees by path (doctor checks them).
	segBlobs []blobRef
	segTrees map[string]refs.Hash
}

// isFactEntry says whether the entry name in dir (a path in the ledger's
// tree, as a tree walk lists it) is a fact file: a .json blob under facts/.
// name may be the whole path: its suffix is the name's.
func isFactEntry(dir string, name []byte, isDir bool) bool {
	return !isDir && (dir == factsDir || strings.HasPrefix(dir, factsDir+"/")) && bytes.HasSuffix(name, []byte(".json"))
}

// noteSegBlob keeps what doctor checks the segment blobs with: the entry
// p (name in dir) when it is a segment blob, and the trees of a day
// directory's segments once a segment blob was seen.
func (fl *factList) noteSegBlob(dir string, name, p []byte, isDir bool, h refs.Hash) {
	if strings.Count(dir, "/") != 2 || !strings.HasPrefix(dir, factsDir+"/") {
		return
	}
	if !isDir && bytes.HasSuffix(name, []byte(segBlobExt)) && isSegmentBlobPath(string(p)) {
		fl.segBlobs = append(fl.segBlobs, blobRef{string(p), h})
	} else if isDir && len(fl.segBlobs) > 0 {
		if fl.segTrees == nil {
			fl.segTrees = map[string]refs.Hash{}
		}
		fl.segTrees[string(p)] = h
	}
}

// segUnit marks a factBlob that is a segment's segment blob.
const segUnit = 1 << 31

// addSegment lists the segment at path (tree seg) as its segment blob h:
// one unit read in place of the segment's blobs.
func (fl *factList) addSegment(path string, seg, h refs.Hash) int {
	fl.oddMu.Lock()
	fl.segs = append(fl.segs, seg)
	k := len(fl.segs) - 1
	fl.oddMu.Unlock()
	d := strings.Clone(path)
	i := fl.add(d, nil, h)
	pg := (*fl.pages.Load())[i/blobPage]
	pg[i%blobPage].odd = segUnit | uint32(k)
	pg[i%blobPage].id = 0
	return i
}

// segment returns the segment tree of a unit listed by addSegment.
func (fl *factList) segment(b factBlob) (refs.Hash, bool) {
	if b.odd&segUnit == 0 {
		return refs.Hash{}, false
	}
	fl.oddMu.Lock()
	defer fl.oddMu.Unlock()
	return fl.segs[b.odd&^segUnit], true
}

const blobPage = 4096

func (fl *factList) add(dir string, name []byte, h refs.Hash) int {
	if fl.dir == nil || *fl.dir != dir {
		d := strings.Clone(dir)
		fl.dir = &d
	}
	b := factBlob{dir: fl.dir, hash: h}
	if id, ok := nameID(name); ok {
		b.id = id
	} else if name != nil {
		fl.oddMu.Lock()
		fl.odds = append(fl.odds, string(name))
		b.odd = uint32(len(fl.odds))
		fl.oddMu.Unlock()
	}
	i := fl.n
	if i%blobPage == 0 {
		var ps []*[blobPage]factBlob
		if old := fl.pages.Load(); old != nil {
			ps = append(ps, *old...)
		}
		ps = append(ps, new([blobPage]factBlob))
		fl.pages.Store(&ps)
	}
	(*fl.pages.Load())[i/blobPage][i%blobPage] = b
	fl.n++
	return i
}

// nameID is the id's number of a blob name f_<16 lowercase hex>.json.
func nameID(name []byte) (uint64, bool) {
	if len(name) != 23 || string(name[:2]) != "f_" || string(name[18:]) != ".json" {
		return 0, false
	}
	return lowerHex(string(name[2:18]))
}

func (fl *factList) blob(i int) factBlob {
	return (*fl.pages.Load())[i/blobPage][i%blobPage]
}

// name is b's file name, written into buf (reused: the string is over it
// until the next call with buf).
func (fl *factList) name(b factBlob, buf *[]byte) string {
	if b.odd > 0 {
		fl.oddMu.Lock()
		defer fl.oddMu.Unlock()
		return fl.odds[b.odd-1]
	}
	const hexd = "0123456789abcdef"
	nb := append((*buf)[:0], "f_0000000000000000.json"...)
	for k := 17; k >= 2; k-- {
		nb[k] = hexd[b.id>>(4*(17-k))&15]
	}
	*buf = nb
	return unsafe.String(unsafe.SliceData(nb), len(nb))
}

func (fl *factList) path(i int) string {
	var buf []byte
	b := fl.blob(i)
	if b.odd&segUnit != 0 {
		return *b.dir + segBlobExt
	}
	return *b.dir + "/" + fl.name(b, &buf)
}

// listFacts lists the fact blobs under tree with one git ls-tree into
// fl, calling found with each one's index and id as ls-tree names it. Of
// the trees, it keeps only those along the newest path (the ones the
// state file carries: cache.headPath), not the whole ledger's.
func (l *Ledger) listFacts(tree refs.Hash, fl *factList, found func(i int, h refs.Hash)) error {
	// The newest path: its directories, root first, their ids and
	// entries. A directory is on it when it is the greatest of its
	// parent's, and its parent is on it (at the root: facts/). ls-tree
	// lists in order, so every segment is the newest for a while: its
	// entries are kept as bytes, in buffers a level reuses, and made
	// into refs.Entry values only for the path that stays.
	type level struct {
		path    string
		hash    refs.Hash
		entries []headEntry
		names   []byte
	}
	head := []*level{{hash: tree}}
	var spare []*level
	dir := ""
	err := l.Store.WalkTree(tree, func(p []byte, isDir bool, h refs.Hash) {
		parent, name := []byte(nil), p
		if i := bytes.LastIndexByte(p, '/'); i >= 0 {
			parent, name = p[:i], p[i+1:]
		}
		if string(parent) != dir {
			dir = string(parent)
		}
		d := bytes.Count(parent, []byte("/")) + 1
		if len(parent) == 0 {
			d = 0
		}
		if d < len(head) && head[d].path == dir {
			lv := head[d]
			lv.entries = append(lv.entries, headEntry{uint32(len(lv.names)), uint32(len(name)), isDir, h})
			lv.names = append(lv.names, name...)
			if isDir && (d > 0 || string(name) == factsDir) {
				if d+1 >= len(head) || string(name) > facts.BaseName(head[d+1].path) {
					spare = append(spare, head[d+1:]...)
					var nl *level
					if n := len(spare); n > 0 {
						nl, spare = spare[n-1], spare[:n-1]
						*nl = level{entries: nl.entries[:0], names: nl.names[:0]}
					} else {
						nl = &level{}
					}
					nl.path, nl.hash = string(p), h
					head = append(head[:d+1], nl)
				}
			}
		}
		if isFactEntry(dir, name, isDir) {
			found(fl.add(dir, name, h), h)
		}
		fl.noteSegBlob(dir, name, p, isDir, h)
	})
	if err != nil {
		return err
	}
	for _, lv := range head {
		es := make([]refs.Entry, len(lv.entries))
		for i, e := range lv.entries {
			es[i] = refs.Entry{Name: string(lv.names[e.name : e.name+e.n]), Dir: e.dir, Hash: e.hash}
		}
		l.cache.remember(lv.hash, es)
	}
	return nil
}

// headEntry is an entry of a tree along the newest path while it is
// listed: its name's place in the level's names.
type headEntry struct {
	name, n uint32
	dir     bool
	hash    refs.Hash
}

// rebuildGCPercent is the collector's GOGC while a rebuild runs. What a
// rebuild keeps is plain bytes (the arena, the keys) the collector does
// not scan, and what it drops is many small facts: collecting more often
// costs little and keeps the peak near what is live (100k facts: about
// 60 MiB of heap instead of 75).
const rebuildGCPercent = 40

// lowGC sets GOGC to rebuildGCPercent unless it is lower or off, and
// returns the function that restores it.
func lowGC() func() {
	old := debug.SetGCPercent(rebuildGCPercent)
	if old >= 0 && old <= rebuildGCPercent || old < 0 {
		debug.SetGCPercent(old)
		return func() {}
	}
	return func() { debug.SetGCPercent(old) }
}

// listUnits lists what a cold read reads under tree into fl, calling
// found with each unit's index, blob id and weight (the fact blobs it
// stands for): the fact blobs of each segment that has no segment blob
// (segment.go), and for a segment that has one, that blob alone, so the
// segment's tree is not read and its blobs are not listed. The trees
// are read in-process, root, facts/, months and days (a few hundred at a
// million facts), in git's order; those along the newest path are
// remembered (cache.headPath), the newest segment's too.
func (l *Ledger) listUnits(tree refs.Hash, or *refs.ObjectReader, fl *factList, found func(i int, h refs.Hash, w int)) error {
	readTree := l.Store.ReadTree
	if or != nil {
		readTree = or.ReadTree
	}
	var walk func(p string, h refs.Hash, depth int, newest bool) error
	walk = func(p string, h refs.Hash, depth int, newest bool) error {
		es, err := readTree(h)
		if err != nil {
			return err
		}
		if newest {
			l.cache.remember(h, es)
		}
		best := -1
		var blobs map[string]refs.Hash
		for k, e := range es {
			if e.Dir && (depth > 0 || e.Name == factsDir) && (best < 0 || e.Name > es[best].Name) {
				best = k
			}
			if depth == 3 && !e.Dir {
				if seg, ok := segmentOfBlob(e.Name); ok {
					if blobs == nil {
						blobs = map[string]refs.Hash{}
					}
					blobs[seg] = e.Hash
				}
			}
		}
		for k, e := range es {
			if depth == 0 && e.Name != factsDir {
				continue
			}
			cp := joinPath(p, e.Name)
			if !e.Dir {
				if depth > 0 && strings.HasSuffix(e.Name, ".json") {
					found(fl.add(p, []byte(e.Name), e.Hash), e.Hash, 1)
				}
				continue
			}
			onPath := newest && k == best
			if sb, ok := blobs[e.Name]; ok {
				if onPath {
					// The next append's segment: its tree is kept.
					ses, err := readTree(e.Hash)
					if err != nil {
						return err
					}
					l.cache.remember(e.Hash, ses)
				}
				found(fl.addSegment(cp, e.Hash, sb), sb, segMax)
				continue
			}
			if err := walk(cp, e.Hash, depth+1, onPath); err != nil {
				return err
			}
		}
		return nil
	}
	return walk("", tree, 0, true)
}

// readStore reads and checks every fact under tree into a line store,
// with the warnings parseBlobs gives, in the same order. A full segment
// with a segment blob is read as that one blob, believed only when the
// segment's tree id is rebuilt from it (segmentChecker), else its blobs
// are read. From BatchThreshold blobs on (a segment blob counting as
// segMax), they are read by cat-file (refs.BlobStream) and decoded on the
// other cores while the trees are still being read.
func (l *Ledger) readStore(tree refs.Hash, or *refs.ObjectReader) (*lineStore, error) {
	fl := &factList{}
	ls := &lineStore{}
	ls.spillTo(l.cache.dir)
	warns := map[int][]string{}
	var failed []int // segment blobs not believed
	store := func(i int, fs []*facts.Fact, w []string) {
		for _, f := range fs {
			ls.add(f, uint32(i))
		}
		if len(w) > 0 {
			warns[i] = w
		}
	}
	var rd *streamDecoder
	storeScanned := func(i int, fs []scanned, w []string, bad bool) {
		if bad {
			failed = append(failed, i)
			return
		}
		for _, f := range fs {
			ls.addLine(f, uint32(i))
		}
		if len(w) > 0 {
			warns[i] = w
		}
	}
	weight := 0
	err := l.listUnits(tree, or, fl, func(i int, h refs.Hash, w int) {
		weight += w
		switch {
		case rd != nil:
			rd.bs.Add(i, h)
		case weight >= refs.BatchThreshold:
			rd = l.newStreamDecoder(fl, storeScanned)
			for j := 0; j <= i; j++ {
				rd.bs.Add(j, fl.blob(j).hash)
			}
		}
	})
	streamed := false
	if rd != nil {
		streamed = rd.close() == nil && err == nil
		if !streamed {
			ls.release()
			ls, warns, failed = &lineStore{}, map[int][]string{}, nil
			ls.spillTo(l.cache.dir)
		}
	}
	if err != nil {
		ls.release()
		return nil, err
	}
	if !streamed {
		var sc blobScanner
		var ck segmentChecker
		for i := 0; i < fl.n; i++ {
			b := fl.blob(i)
			data, err := l.Store.ReadBlob(b.hash)
			if b.odd&segUnit != 0 {
				if err == nil {
					if fs, w, ok := sc.scanSegment(fl, i, data, &ck); ok {
						storeScanned(i, fs, w, false)
						continue
					}
				}
				failed = append(failed, i)
				continue
			}
			if err != nil {
				store(i, nil, []string{fmt.Sprintf("%s: %v", fl.path(i), err)})
				continue
			}
			fs, w := parseBlob(fl.path(i), data)
			store(i, fs, w)
		}
	}
	slices.Sort(failed)
	for _, i := range failed {
		if err := l.readSegment(fl, i, store); err != nil {
			ls.release()
			return nil, err
		}
	}
	idx := make([]int, 0, len(warns))
	for i := range warns {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	for _, i := range idx {
		l.Warnings = append(l.Warnings, warns[i]...)
	}
	return ls, nil
}

// readSegment reads the facts of the segment unit i whose segment blob
// was not believed from the segment's own tree and blobs, as a read
// without segment blobs does, and stores them as unit i.
func (l *Ledger) readSegment(fl *factList, i int, store func(i int, fs []*facts.Fact, w []string)) error {
	b := fl.blob(i)
	seg, _ := fl.segment(b)
	var bs []blobRef
	var walk func(p string, h refs.Hash) error
	walk = func(p string, h refs.Hash) error {
		es, err := l.Store.ReadTree(h)
		if err != nil {
			return err
		}
		for _, e := range es {
			cp := p + "/" + e.Name
			if e.Dir {
				if err := walk(cp, e.Hash); err != nil {
					return err
				}
			} else if strings.HasSuffix(e.Name, ".json") {
				bs = append(bs, blobRef{cp, e.Hash})
			}
		}
		return nil
	}
	if err := walk(*b.dir, seg); err != nil {
		return err
	}
	var fs []*facts.Fact
	var ws []string
	for _, r := range bs {
		data, err := l.Store.ReadBlob(r.hash)
		if err != nil {
			ws = append(ws, fmt.Sprintf("%s: %v", r.path, err))
			continue
		}
		f, w := parseBlob(r.path, data)
		fs, ws = append(fs, f...), append(ws, w...)
	}
	store(i, fs, ws)
	return nil
}

// streamDecoder reads blobs with a refs.BlobStream and decodes and checks
// them on the other cores; store runs on one goroutine. A segment blob
// that does not rebuild its segment's tree is stored as bad.
type streamDecoder struct {
	bs      *refs.BlobStream
	jobs    chan streamJob
	results chan streamResult
	wg      sync.WaitGroup
	done    chan struct{}
}

type streamJob struct {
	i    int
	data []byte
}

type streamResult struct {
	i   int
	fs  []scanned
	w   []string
	bad bool
}

func (l *Ledger) newStreamDecoder(fl *factList, store func(i int, fs []scanned, w []string, bad bool)) *streamDecoder {
	rd := &streamDecoder{jobs: make(chan streamJob, 64), results: make(chan streamResult, 64), done: make(chan struct{})}
	for w := 0; w < max(1, runtime.GOMAXPROCS(0)); w++ {
		rd.wg.Add(1)
		go func() {
			defer rd.wg.Done()
			var sc blobScanner
			var ck segmentChecker
			for j := range rd.jobs {
				if fl.blob(j.i).odd&segUnit != 0 {
					fs, w, ok := sc.scanSegment(fl, j.i, j.data, &ck)
					rd.results <- streamResult{j.i, fs, w, !ok}
					continue
				}
				fs, w := sc.scan(fl, j.i, j.data)
				rd.results <- streamResult{j.i, fs, w, false}
			}
		}()
	}
	go func() {
		for r := range rd.results {
			store(r.i, r.fs, r.w, r.bad)
		}
		close(rd.done)
	}()
	rd.bs = l.Store.NewBlobStream(func(i int, data []byte) { rd.jobs <- streamJob{i, data} })
	return rd
}

// close waits for every blob asked for to be stored.
func (rd *streamDecoder) close() error {
	err := rd.bs.Close()
	close(rd.jobs)
	rd.wg.Wait()
	close(rd.results)
	<-rd.done
	return err
}

// rebuildInto projects the facts of ls at horizon hz and writes them, in
// order, as a new mirror generation; the state is saved with it.
func (l *Ledger) rebuildInto(ls *lineStore, hz time.Time, head, tree string) (*facts.State, error) {
	defer ls.release()
	var st *facts.State
	// The checkpoint: the projection before the first fact held back.
	mg, err := l.cache.writeMirror(func(mw *mirrorWriter) error {
		ls.pos = func() (int64, uint32) { return mw.cw.n, mw.cw.sum }
		var err error
		st, err = ls.project(hz, func(line []byte, f *facts.Fact) { mw.add(line, f) })
		return err
	})
	if err != nil && err != errMirrorNotWritten {
		return nil, err
	}
	st.Head, st.Tree = head, tree
	if err == nil { // else the projection is good, only the cache is not
		l.cache.saveWith(st, mg)
		if cp := ls.cp; cp != nil {
			l.cache.saveCheckpoint(encodeCheckpoint(mg.gen, cp.n, cp.sum, cp.st, cp.ignore))
		}
	}
	return st, nil
}
