package facts

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/git-rally/git-rally/refs"
)

// A rebuild projects every fact of a ledger from scratch without holding
// them: each fact is decoded and checked once, its stored line copied
// into an arena of plain bytes and a small key (clock, id, where its line
// is) kept. The keys are sorted, and the lines are read back in (clock,
// id) order: written to the new mirror and decoded again, one at a time,
// into the projection. Memory is the ledger's text plus 40 bytes a fact,
// not 100k Fact structs and their strings.

// lineKey is one fact of a rebuild.
type lineKey struct {
	clock int64
	id    uint64 // the 16 hex digits of the id: their order is the id's
	seq   uint64 // order of reading: of duplicates, the first one read wins
	chunk uint32
	off   uint32
	n     uint32
}

func (a lineKey) cmp(b lineKey) int {
	switch {
	case a.clock != b.clock:
		return cmpInt(a.clock, b.clock)
	case a.id != b.id:
		return cmpInt(a.id, b.id)
	}
	return cmpInt(a.seq, b.seq)
}

func cmpInt[T int64 | uint64](a, b T) int {
	if a < b {
		return -1
	}
	if a > b {
		return 1
	}
	return 0
}

// arenaChunk is the size of the arena's chunks: a line is never copied
// again once stored, and the arena never holds a second copy while it
// grows.
var arenaChunk = 1 << 20

// lineStore collects the facts of a rebuild.
type lineStore struct {
	chunks [][]byte
	// spill holds the full chunks of a large rebuild on disk
	// (rebuildspill.go); a chunk written there is nil in chunks.
	spill    *spill
	spillDir string
	// The keys are collected in pages that never move (keyPage keys
	// each) and made one slice to sort: 100k keys are not copied again
	// and again as they grow.
	kpages   [][]lineKey
	nkeys    int
	keys     []lineKey
	retracts []retractRef
	// pos, when set, makes project take a checkpoint (cp) before the
	// first fact the reader holds back, or at the last point before it
	// that a checkpoint can be taken at (cachecheckpoint.go); pos gives
	// the mirror's length and CRC-32 so far.
	pos func() (int64, uint32)
	cp  *checkpoint
	// odd is set when a fact's id is not f_ and 16 hex digits (only a
	// checked fact is stored, so never in practice): the caller then
	// projects the old way.
	odd bool
}

// retractRef is a retraction seen in a rebuild.
type retractRef struct {
	key  lineKey
	id   string
	ref  string
	tool string
}

// add stores f; seq orders duplicates.
func (ls *lineStore) add(f *Fact, seq uint64) {
	id, ok := parseFactID(f.ID)
	var r *retractRef
	if f.Kind == KindRetract && f.Ref != "" {
		r = &retractRef{id: f.ID, ref: f.Ref, tool: f.Tool}
	}
	ls.addLine(scanned{clock: f.Clock, id: id, idOK: ok, raw: f.Raw, retract: r}, seq)
}

// scanned is a checked fact as the line store keeps it: its key, its
// stored line (with its newline) and, for a retraction, what it retracts.
type scanned struct {
	clock   int64
	id      uint64
	idOK    bool // the id is f_ and 16 hex digits (parseFactID)
	raw     []byte
	retract *retractRef
}

// addLine stores one scanned fact; seq orders duplicates.
func (ls *lineStore) addLine(f scanned, seq uint64) {
	if !f.idOK {
		ls.odd = true
		return
	}
	raw := f.raw
	last := len(ls.chunks) - 1
	if last < 0 || len(ls.chunks[last])+len(raw) > cap(ls.chunks[last]) {
		if last >= 0 {
			ls.spillChunk(last)
		}
		ls.chunks = append(ls.chunks, make([]byte, 0, max(arenaChunk, len(raw))))
		last++
	}
	c := ls.chunks[last]
	k := lineKey{clock: f.clock, id: f.id, seq: seq, chunk: uint32(last), off: uint32(len(c)), n: uint32(len(raw))}
	ls.chunks[last] = append(c, raw...)
	if ls.nkeys%keyPage == 0 {
		ls.kpages = append(ls.kpages, make([]lineKey, 0, keyPage))
	}
	ls.kpages[len(ls.kpages)-1] = append(ls.kpages[len(ls.kpages)-1], k)
	ls.nkeys++
	if f.retract != nil {
		r := *f.retract
		r.key = k
		ls.retracts = append(ls.retracts, r)
	}
}

const keyPage = 4096

func (ls *lineStore) line(k lineKey) []byte {
	if c := ls.chunks[k.chunk]; c != nil {
		return c[k.off : k.off+k.n]
	}
	return ls.spilled(k.chunk)[k.off : k.off+k.n]
}

// parseFactID returns the number an id f_<16 hex digits> spells.
func parseFactID(id string) (uint64, bool) {
	if len(id) != 18 || id[:2] != "f_" {
		return 0, false
	}
	return lowerHex(id[2:])
}

// lowerHex returns the number at most 16 lowercase hex digits spell (ids
// are written lowercase; strconv.ParseUint would take A-F too).
func lowerHex(digits string) (uint64, bool) {
	if len(digits) > 16 {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uint64(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uint64(c-'a'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

// sortUnique orders the keys by (clock, id) and drops all but the first
// read of each id (the same id is the same content, so the same clock:
// duplicates are neighbours).
func (ls *lineStore) sortUnique() {
	ls.keys = make([]lineKey, 0, ls.nkeys)
	for _, p := range ls.kpages {
		ls.keys = append(ls.keys, p...)
	}
	ls.kpages = nil
	slices.SortFunc(ls.keys, lineKey.cmp)
	out := ls.keys[:0]
	for i, k := range ls.keys {
		if i > 0 && k.id == out[len(out)-1].id && k.clock == out[len(out)-1].clock {
			continue
		}
		out = append(out, k)
	}
	ls.keys = out
}

// project builds the projection of the stored facts for a reader whose
// horizon is hz, exactly as BuildAt does on the same facts, and calls
// emit with each line and its fact in (clock, id) order. It returns
// errRebuild when a stored line does not decode again (a bug).
func (ls *lineStore) project(hz time.Time, emit func(line []byte, f *Fact)) (*State, error) {
	return ls.projectFrom(nil, hz, emit)
}

// projectFrom is project on top of a checkpoint's projection cp (nil:
// from nothing), the stored facts being the ones after it. A retraction
// whose target is not among them is believed to retract nothing only
// when the checkpoint says so (cp.ignore); otherwise it returns
// errRebuild: its target may be before the checkpoint.
func (ls *lineStore) projectFrom(cp *checkpoint, hz time.Time, emit func(line []byte, f *Fact)) (*State, error) {
	ls.sortUnique()
	s := NewState()
	var cps checkpointPoints
	if cp != nil {
		s = cp.st
		// Retractions the checkpoint knows count for nothing; those
		// before this tail never come again.
		for id := range cp.ignore {
			cps.ignored(id, lineKey{clock: math.MaxInt64})
		}
	}
	s.horizon = hz
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
				f, err := Parse(ls.line(k))
				if err != nil {
					return nil, errRebuild
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
					return nil, errRebuild
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
	// and a few batches ahead; they are applied here, in order.
	const batch = 512
	type decoded struct {
		fs  []*Fact
		bad bool
	}
	nb := (len(ls.keys) + batch - 1) / batch
	order := make(chan chan decoded, 2*max(1, runtime.GOMAXPROCS(0)))
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer close(order)
		sem := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
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
				d := decoded{fs: make([]*Fact, len(ks))}
				for i, k := range ks {
					f, err := Parse(ls.line(k))
					if err != nil {
						d.bad = true
						break
					}
					d.fs[i] = f
				}
				out <- d
			}()
		}
	}()
	b := 0
	for out := range order {
		d := <-out
		if d.bad {
			return nil, errRebuild
		}
		for i, f := range d.fs {
			if ls.pos != nil {
				ls.checkpointAt(&cps, s, ls.keys[b*batch+i], heldAt(f, hz))
			}
			emit(ls.line(ls.keys[b*batch+i]), f)
			s.build(f)
		}
		b++
	}
	if ls.spill != nil && ls.spill.failed {
		return nil, errRebuild
	}
	s.forget()
	return s, nil
}

// build applies one fact of a projection built at once, in (clock, id)
// order, with the retractions already known (BuildAt).
func (s *State) build(f *Fact) {
	if s.held(f) {
		return
	}
	s.count(f)
	if _, gone := s.Retraction[f.ID]; gone {
		s.supersede(f) // a retracted renewal still ends the claim it renewed
		return
	}
	if f.Kind == KindRetract {
		return
	}
	s.apply(f)
}

// factBlob is a fact blob of a rebuild: its directory (shared by the
// blobs of a segment), its name and its id.
type factBlob struct {
	dir, name string
	hash      refs.Hash
}

// factList lists the fact blobs of a tree in the order ls-tree gives.
// It grows while the blobs already listed are read and decoded on other
// goroutines, which look blobs up without a lock: the pages never move,
// the page list is published anew (atomically) when it grows, and a
// blob's index reaches a reader only after the blob is written (through
// the stream's channels). Listing 100k blobs copies none of them again.
type factList struct {
	pages atomic.Pointer[[]*[blobPage]factBlob]
	n     int    // the lister's
	names []byte // the current page of names; a name is a string over it
}

const (
	blobPage = 4096
	namePage = 64 << 10
)

func (fl *factList) add(dir string, name []byte, h refs.Hash) int {
	if len(fl.names)+len(name) > cap(fl.names) {
		fl.names = make([]byte, 0, max(namePage, len(name)))
	}
	off := len(fl.names)
	fl.names = append(fl.names, name...)
	// The page's bytes are never written again: the string may alias them.
	nm := unsafe.String(unsafe.SliceData(fl.names[off:]), len(name))
	i := fl.n
	if i%blobPage == 0 {
		var ps []*[blobPage]factBlob
		if old := fl.pages.Load(); old != nil {
			ps = append(ps, *old...)
		}
		ps = append(ps, new([blobPage]factBlob))
		fl.pages.Store(&ps)
	}
	(*fl.pages.Load())[i/blobPage][i%blobPage] = factBlob{dir, nm, h}
	fl.n++
	return i
}

func (fl *factList) blob(i int) factBlob {
	return (*fl.pages.Load())[i/blobPage][i%blobPage]
}

func (fl *factList) path(i int) string {
	b := fl.blob(i)
	return b.dir + "/" + b.name
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
				if d+1 >= len(head) || string(name) > baseName(head[d+1].path) {
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
		if !isDir && (dir == factsDir || strings.HasPrefix(dir, factsDir+"/")) && bytes.HasSuffix(name, []byte(".json")) {
			found(fl.add(dir, name, h), h)
		}
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

// readStore reads and checks every fact blob under tree into a line
// store, with the warnings parseBlobs gives, in the same order. From the
// BatchThreshold-th blob on, the blobs are read by cat-file (refs.BlobStream)
// and decoded on the other cores while ls-tree still lists the tree.
func (l *Ledger) readStore(tree refs.Hash) (*lineStore, error) {
	fl := &factList{}
	ls := &lineStore{}
	ls.spillTo(l.cache.dir)
	warns := map[int][]string{}
	store := func(i int, fs []*Fact, w []string) {
		for j, f := range fs {
			ls.add(f, uint64(i)<<32|uint64(j))
		}
		if len(w) > 0 {
			warns[i] = w
		}
	}
	var rd *streamDecoder
	storeScanned := func(i int, fs []scanned, w []string) {
		for j, f := range fs {
			ls.addLine(f, uint64(i)<<32|uint64(j))
		}
		if len(w) > 0 {
			warns[i] = w
		}
	}
	err := l.listFacts(tree, fl, func(i int, h refs.Hash) {
		switch {
		case rd != nil:
			rd.bs.Add(i, h)
		case i+1 == refs.BatchThreshold:
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
			ls, warns = &lineStore{}, map[int][]string{}
			ls.spillTo(l.cache.dir)
		}
	}
	if err != nil {
		ls.release()
		return nil, err
	}
	if !streamed {
		for i := 0; i < fl.n; i++ {
			data, err := l.Store.ReadBlob(fl.blob(i).hash)
			if err != nil {
				store(i, nil, []string{fmt.Sprintf("%s: %v", fl.path(i), err)})
				continue
			}
			fs, w := parseBlob(fl.path(i), data)
			store(i, fs, w)
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

// streamDecoder reads blobs with a refs.BlobStream and decodes and checks
// them on the other cores; store runs on one goroutine.
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
	i  int
	fs []scanned
	w  []string
}

func (l *Ledger) newStreamDecoder(fl *factList, store func(i int, fs []scanned, w []string)) *streamDecoder {
	rd := &streamDecoder{jobs: make(chan streamJob, 256), results: make(chan streamResult, 256), done: make(chan struct{})}
	for w := 0; w < max(1, runtime.GOMAXPROCS(0)); w++ {
		rd.wg.Add(1)
		go func() {
			defer rd.wg.Done()
			var sc blobScanner
			for j := range rd.jobs {
				fs, w := sc.scan(fl.blob(j.i), j.data)
				rd.results <- streamResult{j.i, fs, w}
			}
		}()
	}
	go func() {
		for r := range rd.results {
			store(r.i, r.fs, r.w)
		}
		close(rd.done)
	}()
	rd.bs = l.Store.NewBlobStream(func(i int, data []byte) { rd.jobs <- streamJob{i, data} })
	return rd
}

// blobScanner is parseBlobRaw for a rebuild's first pass, which keeps of
// a fact only its key and line: a canonical line is decoded into one Fact
// the scanner reuses, whose strings alias the blob (nothing of it is kept
// but copies), and hashed in a buffer it reuses. A rebuild reads 100k
// facts; each Fact is 0.5 KB.
type blobScanner struct {
	f   Fact
	ms  fastMembers
	buf []byte
}

// scan returns the good facts of the blob b, and a warning for each line
// skipped, exactly as parseBlobRaw(its path, data, true) does.
func (sc *blobScanner) scan(b factBlob, data []byte) ([]scanned, []string) {
	path := func() string { return b.dir + "/" + b.name }
	if w, ok := oversizeWarning(path(), data); ok {
		return nil, []string{w}
	}
	var out []scanned
	var warns []string
	for rest := data; len(rest) > 0; {
		var line []byte
		var nl bool
		line, rest, nl = cutLine(rest)
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var c *Corrupt
		var f *Fact
		var raw []byte
		sc.f, sc.ms = Fact{}, fastMembers{}
		if fastDecodeInto(&sc.f, line, unsafe.String(unsafe.SliceData(line), len(line)), &sc.ms) && sc.f.ID != "" && sc.f.Kind != "" {
			f = &sc.f
			if nl {
				raw = line[: len(line)+1 : len(line)+1]
			} else {
				raw = append(append(make([]byte, 0, len(line)+1), line...), '\n')
			}
			var id [18]byte
			sc.buf = fastIDInto(&id, sc.buf, line, &sc.ms)
			got := f.ID
			if string(id[:]) != got {
				got = string(id[:])
			}
			c = checkStoredID(f, got, nil, b.name)
		} else {
			var err error
			if f, err = Parse(line); err != nil {
				warns = append(warns, fmt.Sprintf("skipping unreadable line in %s: %v", Sanitize(path(), 200), err))
				continue
			}
			raw = f.Raw
			c = checkStored(f, line, b.name)
		}
		if c != nil {
			warns = append(warns, fmt.Sprintf("skipping corrupt fact in %s: %s: %s", Sanitize(path(), 200), c.Code, c.Message))
			continue
		}
		s := scanned{clock: f.Clock, raw: raw}
		s.id, s.idOK = parseFactID(f.ID)
		if f.Kind == KindRetract && f.Ref != "" {
			s.retract = &retractRef{id: strings.Clone(f.ID), ref: strings.Clone(f.Ref), tool: strings.Clone(f.Tool)}
		}
		out = append(out, s)
	}
	return out, warns
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
func (l *Ledger) rebuildInto(ls *lineStore, hz time.Time, head, tree string) (*State, error) {
	defer ls.release()
	var st *State
	// The checkpoint: the projection before the first fact held back.
	mg, err := l.cache.writeMirror(func(mw *mirrorWriter) error {
		ls.pos = func() (int64, uint32) { return mw.cw.n, mw.cw.sum }
		var err error
		st, err = ls.project(hz, func(line []byte, f *Fact) { mw.add(line, f) })
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

// errMirrorNotWritten reports a mirror file that could not be written.
var errMirrorNotWritten = errors.New("mirror not written")

// mirrorGen is a mirror generation: its number, length and CRC-32.
type mirrorGen struct {
	gen int
	n   int64
	sum uint32
}

// writeMirror writes a new mirror generation and its index with write,
// and removes the generations before the previous one. write's error is
// returned as is; when the files cannot be written, write still runs
// (into nothing) and errMirrorNotWritten is returned.
func (c *cache) writeMirror(write func(mw *mirrorWriter) error) (mirrorGen, error) {
	// A new generation is above every one on disk, not only above the
	// one this cache last saw: another process may have written newer
	// ones since, and a state file names one of them.
	gen := c.loadGen() + 1
	if c.saved != nil && c.saved.Gen >= gen {
		gen = c.saved.Gen + 1
	}
	cw := &crcWriter{}
	mw := &mirrorWriter{cw: cw}
	var f, xf *os.File
	err := os.MkdirAll(c.dir, 0o777)
	if err == nil {
		f, err = os.Create(c.mirrorPath(gen) + ".tmp")
	}
	if err == nil {
		if xf, err = os.Create(c.indexPath(gen) + ".tmp"); err != nil {
			f.Close()
			os.Remove(f.Name())
			f = nil
		}
	}
	var bw *bufio.Writer
	if err == nil {
		bw = bufio.NewWriterSize(f, 256<<10)
		cw.w = bw
		mw.idx = bufio.NewWriterSize(xf, 64<<10)
	} else {
		cw.failed = err
	}
	drop := func() {
		if f != nil {
			f.Close()
			os.Remove(f.Name())
			xf.Close()
			os.Remove(xf.Name())
		}
	}
	if werr := write(mw); werr != nil {
		drop()
		return mirrorGen{}, werr
	}
	if f == nil {
		return mirrorGen{}, errMirrorNotWritten
	}
	if cw.failed == nil {
		cw.failed = bw.Flush()
	}
	if cw.failed == nil {
		cw.failed = mw.idx.Flush()
	}
	if cw.failed == nil {
		cw.failed = xf.Close()
	}
	if err := f.Close(); cw.failed == nil {
		cw.failed = err
	}
	if cw.failed == nil {
		cw.failed = os.Rename(xf.Name(), c.indexPath(gen))
	}
	if cw.failed == nil {
		cw.failed = os.Rename(f.Name(), c.mirrorPath(gen))
	}
	if cw.failed != nil {
		drop()
		os.Remove(c.indexPath(gen))
		return mirrorGen{}, errMirrorNotWritten
	}
	c.removeGensBefore(gen - 1)
	return mirrorGen{gen, cw.n, cw.sum}, nil
}

// crcWriter counts and checksums what it passes on; after a write error
// (failed) it goes on counting into nothing.
type crcWriter struct {
	w      io.Writer
	n      int64
	sum    uint32
	failed error
}

func (cw *crcWriter) Write(p []byte) (int, error) {
	cw.n += int64(len(p))
	cw.sum = crc32.Update(cw.sum, crcTable, p)
	if cw.failed == nil {
		_, cw.failed = cw.w.Write(p)
	}
	return len(p), nil
}

// mirrorStore reads the mirror of the saved state st into a line store,
// streamed: it is believed only when its length, CRC and line count are
// st's.
func (c *cache) mirrorStore(st *State) (*lineStore, bool) {
	f, ok := c.openMirror(st)
	if !ok {
		return nil, false
	}
	defer f.Close()
	size := c.saved.MirrorLen
	mirrorRead.Add(size)
	br := bufio.NewReaderSize(io.LimitReader(f, size), 256<<10)
	ls := &lineStore{}
	ls.spillTo(c.dir)
	ok = false
	defer func() {
		if !ok {
			ls.release()
		}
	}()
	var sum uint32
	var n int64
	// Each line is decoded into one reused Fact, as a rebuild's scanner
	// does: the line store copies what it keeps, and a Fact a line
	// (about 1.8 KB with its strings, left to the collector) made a
	// rebuild from the mirror of 1M facts peak at 1.8 GB.
	var sf Fact
	var ms fastMembers
	for seq := uint64(0); ; seq++ {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A line longer than the buffer: read it whole.
			rest, err2 := br.ReadBytes('\n')
			line, err = append(append([]byte(nil), line...), rest...), err2
		}
		if err == io.EOF && len(line) == 0 {
			break
		}
		if err != nil {
			return nil, false
		}
		sum = crc32.Update(sum, crcTable, line)
		n += int64(len(line))
		body := bytes.TrimSuffix(line, []byte{'\n'})
		sf, ms = Fact{}, fastMembers{}
		fact := &sf
		if !fastDecodeInto(&sf, body, unsafe.String(unsafe.SliceData(body), len(body)), &ms) || sf.ID == "" || sf.Kind == "" {
			if fact, err = Parse(line); err != nil {
				return nil, false
			}
		}
		sc := scanned{clock: fact.Clock, raw: line}
		sc.id, sc.idOK = parseFactID(fact.ID)
		if fact.Kind == KindRetract && fact.Ref != "" {
			sc.retract = &retractRef{id: strings.Clone(fact.ID), ref: strings.Clone(fact.Ref), tool: strings.Clone(fact.Tool)}
		}
		ls.addLine(sc, seq)
	}
	if n != size || sum != c.saved.MirrorSum || ls.nkeys != st.Facts {
		return nil, false
	}
	ok = true
	return ls, true
}
