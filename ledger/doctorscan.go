package ledger

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// doctorStreamAt is the number of fact blobs from which doctor reads them
// through cat-file streams (refs.BlobStream) instead of one by one.
var doctorStreamAt = refs.BatchThreshold

// doctorFactsAllocated counts the lines doctor decoded into a Fact of
// their own: only lines not in this version's encoding (tests hold it to
// them).
var doctorFactsAllocated atomic.Int64

// doctorFacts checks every fact blob of tree and returns the problems as
// the one-by-one check ordered them (the tree's order; per line
// unparsable, bad-id, a stored-fact check or future-time, then
// duplicate-id, then misplaced). It holds no fact and no list of the
// tree: the trees are read one at a time through one cat-file
// (walkTreeWith), and the fact blobs are listed, read and checked
// doctorChunk at a time; each line is decoded into a Fact its goroutine
// reuses (strings over the blob) and hashed in a buffer it reuses, and
// only its id is kept (16 bytes: the id's number, its blob and line), in
// sorted runs spilled to a temporary file (idRuns) that are merged at
// the end to find duplicates. At a million facts ls-tree's listing held
// 40 bytes a blob here and 126 MB in git, and the ids 16 MB.
func (l *Ledger) doctorFacts(tree refs.Hash) ([]Problem, error) {
	or, err := l.Store.NewObjectReader()
	if err != nil {
		return nil, err
	}
	defer or.Close()
	acc := &doctorAcc{hz: l.horizon(), ids: idRuns{dir: l.cache.dir}}
	defer acc.ids.close()
	segs := &factList{} // only its segment blobs and trees
	fl := &factList{}
	flush := func() {
		l.doctorFactBlobs(acc, fl)
		acc.base += fl.n
		fl = &factList{}
		if doctorChunkDone != nil {
			doctorChunkDone(acc)
		}
	}
	err = walkTreeWith(or.ReadTree, tree, func(p []byte, isDir bool, h refs.Hash) {
		dir, name := "", p
		if i := bytes.LastIndexByte(p, '/'); i >= 0 {
			dir, name = string(p[:i]), p[i+1:]
		}
		if isFactEntry(dir, name, isDir) {
			fl.add(dir, name, h)
			if fl.n >= doctorChunk {
				flush()
			}
		}
		segs.noteSegBlob(dir, name, p, isDir, h)
	})
	if err != nil {
		return nil, err
	}
	flush()
	ps, err := acc.problems(func(want map[uint32]string) error { return l.doctorPaths(tree, want) })
	if err != nil {
		return nil, err
	}
	return append(ps, l.doctorSegmentBlobs(segs)...), nil
}

// doctorChunk is the number of fact blobs doctor lists, reads and checks
// at a time.
var doctorChunk = 1 << 15

// doctorChunkDone, when set, is called after each chunk with what the
// pass has gathered so far (tests).
var doctorChunkDone func(acc *doctorAcc)

// walkTreeWith calls fn with every entry under tree in the order of
// refs.Store.WalkTree (`git ls-tree -r -t`: a tree before what it holds,
// a tree's entries in their stored order), reading one tree at a time
// with read. path is valid during the call only.
func walkTreeWith(read func(refs.Hash) ([]refs.Entry, error), tree refs.Hash, fn func(path []byte, isDir bool, h refs.Hash)) error {
	var path []byte
	var walk func(h refs.Hash) error
	walk = func(h refs.Hash) error {
		es, err := read(h)
		if err != nil {
			return err
		}
		n := len(path)
		for _, e := range es {
			path = append(path[:n], e.Name...)
			fn(path, e.Dir, e.Hash)
			if e.Dir {
				path = append(path, '/')
				if err := walk(e.Hash); err != nil {
					return err
				}
			}
		}
		path = path[:n]
		return nil
	}
	return walk(tree)
}

// doctorPaths fills want (blob indexes of doctorFacts' walk) with the
// paths of those blobs, walking tree again: only duplicates need them.
func (l *Ledger) doctorPaths(tree refs.Hash, want map[uint32]string) error {
	or, err := l.Store.NewObjectReader()
	if err != nil {
		return err
	}
	defer or.Close()
	i := uint32(0)
	return walkTreeWith(or.ReadTree, tree, func(p []byte, isDir bool, h refs.Hash) {
		dir := ""
		if k := bytes.LastIndexByte(p, '/'); k >= 0 {
			dir = string(p[:k])
		}
		if isFactEntry(dir, p, isDir) {
			if _, ok := want[i]; ok {
				want[i] = string(p)
			}
			i++
		}
	})
}

// doctorSegmentBlobs checks each segment blob against its segment's tree
// id as a cold read does, and names those that do not hold: a cold read
// ignores them and reads their segments' blobs (SegmentBlobCode).
func (l *Ledger) doctorSegmentBlobs(fl *factList) []Problem {
	if len(fl.segBlobs) == 0 {
		return nil
	}
	bad := make([]bool, len(fl.segBlobs))
	why := make([]string, len(fl.segBlobs))
	checkers := make(chan *segmentChecker, 8)
	check := func(i int, data []byte) {
		var ck *segmentChecker
		select {
		case ck = <-checkers:
		default:
			ck = &segmentChecker{}
		}
		seg, ok := fl.segTrees[strings.TrimSuffix(fl.segBlobs[i].path, segBlobExt)]
		switch {
		case !ok:
			bad[i], why[i] = true, "it has no segment beside it"
		default:
			if _, over := refs.Oversize(data); over {
				bad[i], why[i] = true, "it is over the read limit"
			} else if _, ok := ck.check(data, seg); !ok {
				bad[i], why[i] = true, "its lines are not its segment's facts (stale after a merge, or forged)"
			}
		}
		select {
		case checkers <- ck:
		default:
		}
	}
	bs := l.doctorStream(len(fl.segBlobs), check)
	for i, b := range fl.segBlobs {
		bs.Add(i, b.hash)
	}
	err := bs.Close()
	var ps []Problem
	if err != nil {
		ps = append(ps, Problem{Code: SegmentBlobCode, Message: fmt.Sprintf("segment blobs could not be read: %v", err)})
	}
	for i, b := range bad {
		if b {
			ps = append(ps, Problem{Code: SegmentBlobCode, Path: fl.segBlobs[i].path,
				Message: fmt.Sprintf("segment blob %s is ignored: %s; reads use the segment's facts, the ledger keeps it", fl.segBlobs[i].path, why[i])})
		}
	}
	return ps
}

// SegmentBlobCode is doctor's finding for a segment blob a read does not
// believe (a warning: no fact is lost or added by it).
const SegmentBlobCode = "segment-blob"

// doctorFactBlobs checks the fact blobs fl lists (acc.base of them came
// before) and adds what it found to acc. Past doctorStreamAt blobs in
// all, they come from cat-file streams; a blob missing or git failing,
// the chunk is checked again one by one, each missing blob a problem.
func (l *Ledger) doctorFactBlobs(acc *doctorAcc, fl *factList) {
	defer lowGC()()
	d := &doctorScan{fl: fl, hz: acc.hz}
	if acc.base+fl.n >= doctorStreamAt {
		if l.streamScan(fl.n, func(i int) refs.Hash { return fl.blob(i).hash }, d.blob) {
			acc.add(d)
			return
		}
		d = &doctorScan{fl: fl, hz: acc.hz}
	}
	sc := &doctorScanner{}
	for i := 0; i < fl.n; i++ {
		data, err := l.Store.ReadBlob(fl.blob(i).hash)
		if errors.Is(err, refs.ErrTooLarge) {
			d.add(i, 0, 0, Problem{Code: "oversize", Path: fl.path(i), Message: err.Error()})
			continue
		}
		if err != nil {
			d.add(i, 0, 0, Problem{Code: "missing-object", Path: fl.path(i), Message: err.Error()})
			continue
		}
		d.blob(sc, i, data)
	}
	acc.add(d)
}

// streamScan streams the n blobs hash(i) names from one cat-file to scan,
// each call with a doctorScanner of its own (the stream's goroutines take
// them from a small pool and put them back); false when a blob is missing
// or git failed.
func (l *Ledger) streamScan(n int, hash func(i int) refs.Hash, scan func(sc *doctorScanner, i int, data []byte)) bool {
	scanners := make(chan *doctorScanner, 8)
	bs := l.doctorStream(n, func(i int, data []byte) {
		var sc *doctorScanner
		select {
		case sc = <-scanners:
		default:
			sc = &doctorScanner{}
		}
		scan(sc, i, data)
		select {
		case scanners <- sc:
		default:
		}
	})
	for i := 0; i < n; i++ {
		bs.Add(i, hash(i))
	}
	return bs.Close() == nil
}

// doctorAcc gathers what the chunks of a doctor pass found: their blob
// indexes are the pass's (base is the blobs of the chunks before).
type doctorAcc struct {
	hz   time.Time
	base int
	ps   []placedProblem
	ids  idRuns
	odd  []oddIDAt
}

// add takes chunk d's findings.
func (a *doctorAcc) add(d *doctorScan) {
	b := uint32(a.base)
	for _, p := range d.ps {
		p.blob += b
		a.ps = append(a.ps, p)
	}
	for k := range d.ids {
		d.ids[k].blob += b
	}
	a.ids.add(d.ids)
	for _, o := range d.odd {
		o.blob += b
		a.odd = append(a.odd, o)
	}
}

// doctorScan is one doctor pass over the fact blobs.
type doctorScan struct {
	fl  *factList
	hz  time.Time
	mu  sync.Mutex
	ps  []placedProblem
	ids []idAt
	odd []oddIDAt // ids that are not f_ and 16 hex digits
}

// placedProblem is a problem and where it goes in the report: its blob,
// its line, and its slot on the line (0 the checks, 1 duplicate, 2
// misplaced).
type placedProblem struct {
	blob, line uint32
	slot       uint8
	p          Problem
}

type idAt struct {
	id         uint64
	blob, line uint32
}

type oddIDAt struct {
	id         string
	blob, line uint32
}

// doctorScanner is what one goroutine reuses line after line.
type doctorScanner struct {
	name []byte
	f    facts.Fact
	ms   facts.FastMembers
	buf  []byte
	ids  []idAt
	odd  []oddIDAt
	ps   []placedProblem
}

func (d *doctorScan) add(blob, line int, slot uint8, p Problem) {
	d.mu.Lock()
	d.ps = append(d.ps, placedProblem{uint32(blob), uint32(line), slot, p})
	d.mu.Unlock()
}

// blob checks the lines of blob i.
func (d *doctorScan) blob(sc *doctorScanner, i int, data []byte) {
	var p string
	path := func() string { // only for a problem
		if p == "" {
			p = d.fl.path(i)
		}
		return p
	}
	sc.ids, sc.odd, sc.ps = sc.ids[:0], sc.odd[:0], sc.ps[:0]
	put := func(line int, slot uint8, p Problem) {
		sc.ps = append(sc.ps, placedProblem{uint32(i), uint32(line), slot, p})
	}
	if size, ok := refs.Oversize(data); ok {
		d.add(i, 0, 0, Problem{Code: "oversize", Path: path(),
			Message: (&refs.TooLargeError{Hash: d.fl.blob(i).hash, Size: size, Limit: refs.MaxBlob}).Error()})
		return
	}
	for rest, n := data, 0; len(rest) > 0; n++ {
		var line []byte
		line, rest, _ = cutLine(rest)
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var f *facts.Fact
		var id string
		sc.f, sc.ms = facts.Fact{}, facts.FastMembers{}
		if facts.FastDecodeInto(&sc.f, line, unsafe.String(unsafe.SliceData(line), len(line)), &sc.ms) && sc.f.ID != "" && sc.f.Kind != "" {
			f = &sc.f
			var b [18]byte
			sc.buf = facts.FastIDInto(&b, sc.buf, line, &sc.ms)
			id = string(b[:])
		} else {
			var err error
			if f, err = facts.Parse(line); err != nil {
				put(n, 0, Problem{Code: "unparsable", Path: path(), Message: err.Error()})
				continue
			}
			doctorFactsAllocated.Add(1)
			id, _ = facts.ComputeID(line)
		}
		if id != f.ID {
			put(n, 0, Problem{Code: "bad-id", Path: path(), Message: fmt.Sprintf("fact %s: its content hashes to %s", facts.Sanitize(f.ID, 40), id)})
		} else if c := facts.CheckStoredID(f, id, nil, ""); c != nil {
			put(n, 0, Problem{Code: c.Code, Path: path(), Message: c.Message})
		} else if f.Time().After(d.hz) {
			put(n, 0, Problem{Code: "future-time", Path: path(),
				Message: fmt.Sprintf("fact %s is dated %s, in the future: held back until then", f.ID, facts.Sanitize(f.At, 40))})
		}
		if v, ok := parseFactID(f.ID); ok {
			sc.ids = append(sc.ids, idAt{v, uint32(i), uint32(n)})
		} else {
			sc.odd = append(sc.odd, oddIDAt{strings.Clone(f.ID), uint32(i), uint32(n)})
		}
		if name := d.fl.name(d.fl.blob(i), &sc.name); name != f.ID+".json" {
			put(n, 2, Problem{Code: "misplaced", Path: path(), Message: fmt.Sprintf("fact %s is stored under another name", facts.Sanitize(f.ID, 40))})
		}
	}
	d.mu.Lock()
	d.ids = append(d.ids, sc.ids...)
	d.odd = append(d.odd, sc.odd...)
	d.ps = append(d.ps, sc.ps...)
	d.mu.Unlock()
}

// problems finds the duplicate ids (each later copy names the one before
// it, in the tree's order) and orders every problem. paths fills in the
// paths of the blobs duplicates name.
func (a *doctorAcc) problems(paths func(want map[uint32]string) error) ([]Problem, error) {
	type dup struct {
		id               string
		blob, line, prev uint32
	}
	var dups []dup
	err := a.ids.each(func(prev, cur idAt) {
		if prev.id == cur.id {
			dups = append(dups, dup{fmt.Sprintf("f_%016x", cur.id), cur.blob, cur.line, prev.blob})
		}
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(a.odd, func(x, y oddIDAt) int {
		return cmp.Or(strings.Compare(x.id, y.id), cmp.Compare(x.blob, y.blob), cmp.Compare(x.line, y.line))
	})
	for k := 1; k < len(a.odd); k++ {
		if x, y := a.odd[k-1], a.odd[k]; x.id == y.id {
			dups = append(dups, dup{x.id, y.blob, y.line, x.blob})
		}
	}
	a.odd = nil
	if len(dups) > 0 {
		want := map[uint32]string{}
		for _, d := range dups {
			want[d.blob], want[d.prev] = "", ""
		}
		if err := paths(want); err != nil {
			return nil, err
		}
		for _, d := range dups {
			a.ps = append(a.ps, placedProblem{d.blob, d.line, 1, Problem{Code: "duplicate-id", Path: want[d.blob],
				Message: fmt.Sprintf("fact %s also at %s", facts.Sanitize(d.id, 40), want[d.prev])}})
		}
	}
	slices.SortStableFunc(a.ps, func(x, y placedProblem) int {
		return cmp.Or(cmp.Compare(x.blob, y.blob), cmp.Compare(x.line, y.line), cmp.Compare(x.slot, y.slot))
	})
	out := make([]Problem, len(a.ps))
	for k, p := range a.ps {
		out[k] = p.p
	}
	return out, nil
}

// clockAt is a good fact of a clock check: where it is, its clock and
// its id.
type clockAt struct {
	blob, line uint32
	clock      int64
	id         string
}

// factClocks returns the clock and id of every good fact (one that
// parseBlobs would return) in the blobs n of them at blob(i), in the
// blobs' order: streamed from cat-file (stream) or read one at a time with
// read, and decoded into a reused Fact, so a step of a million facts holds
// 40 bytes a fact, not its Fact.
func (l *Ledger) factClocks(n int, stream bool, read func(refs.Hash) ([]byte, error), blob func(i int) (path string, h refs.Hash)) ([]clockAt, error) {
	var mu sync.Mutex
	var out []clockAt
	scan := func(sc *doctorScanner, i int, data []byte) {
		path, _ := blob(i)
		if _, ok := refs.Oversize(data); ok {
			return
		}
		var got []clockAt
		for rest, k := data, 0; len(rest) > 0; k++ {
			var line []byte
			line, rest, _ = cutLine(rest)
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			var f *facts.Fact
			var c *facts.Corrupt
			sc.f, sc.ms = facts.Fact{}, facts.FastMembers{}
			if facts.FastDecodeInto(&sc.f, line, unsafe.String(unsafe.SliceData(line), len(line)), &sc.ms) && sc.f.ID != "" && sc.f.Kind != "" {
				f = &sc.f
				var b [18]byte
				sc.buf = facts.FastIDInto(&b, sc.buf, line, &sc.ms)
				c = facts.CheckStoredID(f, string(b[:]), nil, facts.BaseName(path))
			} else {
				var err error
				if f, err = facts.Parse(line); err != nil {
					continue
				}
				c = facts.CheckStored(f, line, facts.BaseName(path))
			}
			if c == nil {
				got = append(got, clockAt{uint32(i), uint32(k), f.Clock, strings.Clone(f.ID)})
			}
		}
		mu.Lock()
		out = append(out, got...)
		mu.Unlock()
	}
	streamed := false
	if stream {
		streamed = l.streamScan(n, func(i int) refs.Hash {
			_, h := blob(i)
			return h
		}, scan)
	}
	if !streamed {
		out = out[:0]
		sc := &doctorScanner{}
		for i := 0; i < n; i++ {
			_, h := blob(i)
			data, err := read(h)
			if err != nil {
				continue // parseBlobs warns and skips it too
			}
			scan(sc, i, data)
		}
	}
	slices.SortFunc(out, func(a, b clockAt) int {
		return cmp.Or(cmp.Compare(a.blob, b.blob), cmp.Compare(a.line, b.line))
	})
	return out, nil
}
