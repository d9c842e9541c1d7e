package ledger

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
)

// idRuns sorts doctor's ids (16 bytes each: the id's number, its blob
// and line) without holding them all: up to idRunLen are kept, then
// sorted and written as a run to an unlinked file in dir, and each merges
// the runs. Without a file (it could not be made) they stay in memory.
type idRuns struct {
	dir  string
	cur  []idAt
	f    *os.File
	bad  bool
	runs []int64 // each run's end offset in f
}

// idRunLen is the ids a run holds (256 KiB: at a million facts doctor's
// peak RSS was 1.4 MiB lower than with 1 MiB runs, 64 runs merged).
var idRunLen = 1 << 14

func idLess(a, b idAt) int {
	return cmp.Or(cmp.Compare(a.id, b.id), cmp.Compare(a.blob, b.blob), cmp.Compare(a.line, b.line))
}

func (r *idRuns) add(ids []idAt) {
	for len(ids) > 0 {
		room := max(idRunLen-len(r.cur), 0)
		if room == 0 && !r.bad && r.spill() {
			continue
		}
		if room == 0 || room > len(ids) {
			room = len(ids)
		}
		r.cur = append(r.cur, ids[:room]...)
		ids = ids[room:]
	}
}

// spill writes the ids held as a sorted run; false when it cannot.
func (r *idRuns) spill() bool {
	if r.f == nil {
		if err := os.MkdirAll(r.dir, 0o777); err != nil {
			r.bad = true
			return false
		}
		f, err := os.CreateTemp(r.dir, "doctor-*.tmp")
		if err != nil {
			r.bad = true
			return false
		}
		os.Remove(f.Name()) // it lives while it is open
		r.f = f
	}
	slices.SortFunc(r.cur, idLess)
	w := bufio.NewWriterSize(io.NewOffsetWriter(r.f, r.end()), 64<<10)
	var b [16]byte
	for _, x := range r.cur {
		binary.LittleEndian.PutUint64(b[:], x.id)
		binary.LittleEndian.PutUint32(b[8:], x.blob)
		binary.LittleEndian.PutUint32(b[12:], x.line)
		if _, err := w.Write(b[:]); err != nil {
			r.bad = true
			return false
		}
	}
	if err := w.Flush(); err != nil {
		r.bad = true
		return false
	}
	r.runs = append(r.runs, r.end()+int64(16*len(r.cur)))
	r.cur = r.cur[:0]
	return true
}

func (r *idRuns) end() int64 {
	if len(r.runs) == 0 {
		return 0
	}
	return r.runs[len(r.runs)-1]
}

// each calls fn with every id after the first, in order, and the one
// before it.
func (r *idRuns) each(fn func(prev, cur idAt)) error {
	slices.SortFunc(r.cur, idLess)
	type src struct {
		br   *bufio.Reader
		left int64
		head idAt
	}
	var srcs []*src
	var readErr error
	next := func(s *src) bool {
		if s.br == nil {
			if len(r.cur) == 0 {
				return false
			}
			s.head, r.cur = r.cur[0], r.cur[1:]
			return true
		}
		if s.left == 0 {
			return false
		}
		var b [16]byte
		if _, err := io.ReadFull(s.br, b[:]); err != nil {
			readErr = err
			return false
		}
		s.left--
		s.head = idAt{binary.LittleEndian.Uint64(b[:]), binary.LittleEndian.Uint32(b[8:]), binary.LittleEndian.Uint32(b[12:])}
		return true
	}
	start := int64(0)
	buf := max(4<<10, (1<<20)/max(len(r.runs), 1))
	for _, end := range r.runs {
		s := &src{br: bufio.NewReaderSize(io.NewSectionReader(r.f, start, end-start), buf), left: (end - start) / 16}
		if next(s) {
			srcs = append(srcs, s)
		}
		start = end
	}
	if s := (&src{}); next(s) {
		srcs = append(srcs, s)
	}
	var prev idAt
	first := true
	for len(srcs) > 0 {
		k := 0
		for j := 1; j < len(srcs); j++ {
			if idLess(srcs[j].head, srcs[k].head) < 0 {
				k = j
			}
		}
		cur := srcs[k].head
		if !first {
			fn(prev, cur)
		}
		prev, first = cur, false
		if !next(srcs[k]) {
			srcs = append(srcs[:k], srcs[k+1:]...)
		}
	}
	if readErr != nil {
		return fmt.Errorf("reading doctor's ids back: %w", readErr)
	}
	return nil
}

func (r *idRuns) close() {
	if r.f != nil {
		r.f.Close()
		r.f = nil
	}
	r.cur = nil
}
