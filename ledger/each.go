package ledger

import (
	"bufio"
	"bytes"
	"errors"
	"hash/crc32"
	"io"
	"unsafe"

	"github.com/git-rally/git-rally/facts"
)

// Each calls fn with every fact of the current head of the kind and by
// the tool given ("": any), in (clock, id) order, holding none of them:
// `log --json` of a million facts, `doctor`'s signature counts. fn must
// not keep f or anything of it (its strings and Raw are slices of a
// buffer read again for the next fact); it may stop the walk with an
// error, which Each returns. With a kind or a tool the mirror's index is
// read and only the facts it names are decoded; otherwise the mirror is
// read front to back, each line decoded into one reused Fact, after its
// length and CRC were checked in a first streamed pass (so nothing is
// handed on from a mirror that does not hold). A cache that cannot be
// read is the one case that holds every fact (l.All).
func (l *Ledger) Each(kind, tool string, fn func(f *facts.Fact) error) error {
	st, err := l.readMirror()
	if err != nil {
		return err
	}
	if st.Head == "" {
		return nil
	}
	// What a walk drops is a fact's garbage, what it keeps is little: at
	// a hot command's GOGC (400, a 16 MB heap before the first collection)
	// `log --json` of a million facts peaked at 34 MiB of garbage.
	defer lowGC()()
	if kind != "" || tool != "" {
		if ok, err := l.cache.indexEach(st, kind, tool, fn); ok || err != nil {
			return err
		}
	} else if ok, err := l.cache.mirrorEach(st, fn); ok || err != nil {
		return err
	}
	all, err := l.All()
	if err != nil {
		return err
	}
	for _, f := range all {
		if (kind == "" || f.Kind == kind) && (tool == "" || f.Tool == tool) {
			if err := fn(f); err != nil {
				return err
			}
		}
	}
	return nil
}

// indexEach calls fn with the facts of kind and tool in st's mirror, in
// order, reading the index front to back. It reports false (nothing
// handed on) when the index or a line it names does not hold; a damaged
// line found after some facts were handed on is an error.
func (c *cache) indexEach(st *facts.State, kind, tool string, fn func(*facts.Fact) error) (bool, error) {
	ix, ok := c.openIndex(st)
	if !ok {
		return false, nil
	}
	defer ix.Close()
	kh, th := fnv32(kind), fnv32(tool)
	handed := false
	var ferr error
	ok = ix.scan(false, func(r indexRec) bool {
		if (kind != "" && r.kind != kh) || (tool != "" && r.tool != th) {
			return true
		}
		f, good := ix.fact(r)
		if !good {
			ferr = errMirrorChanged
			return false
		}
		if (kind == "" || f.Kind == kind) && (tool == "" || f.Tool == tool) {
			handed = true
			if ferr = fn(f); ferr != nil {
				return false
			}
		}
		return true
	})
	if !ok && ferr == nil {
		ferr = errMirrorChanged
	}
	if ferr == errMirrorChanged && !handed {
		return false, nil
	}
	return true, ferr
}

// errMirrorChanged reports a mirror or index found damaged after facts
// from it were handed on.
var errMirrorChanged = errors.New("the cache's mirror of the ledger changed or is damaged while it was read; run the command again")

// mirrorEach streams st's mirror to fn; false when it does not hold.
func (c *cache) mirrorEach(st *facts.State, fn func(*facts.Fact) error) (bool, error) {
	f, ok := c.openMirror(st)
	if !ok {
		return false, nil
	}
	defer f.Close()
	size := c.saved.MirrorLen
	// First pass: the length, the CRC and the number of lines are the
	// saved state's.
	mirrorRead.Add(size)
	var sum uint32
	lines := 0
	buf := make([]byte, 256<<10)
	for off := int64(0); off < size; {
		k, err := f.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		if k == 0 && err != nil {
			return false, nil
		}
		sum = crc32.Update(sum, crcTable, buf[:k])
		lines += bytes.Count(buf[:k], []byte{'\n'})
		off += int64(k)
	}
	if sum != c.saved.MirrorSum || lines != st.Facts {
		return false, nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return false, nil
	}
	mirrorRead.Add(size)
	br := bufio.NewReaderSize(io.LimitReader(f, size), 256<<10)
	var sf facts.Fact
	var ms facts.FastMembers
	var long []byte
	n := 0
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			rest, err2 := br.ReadBytes('\n')
			long = append(append(long[:0], line...), rest...)
			line, err = long, err2
		}
		if err == io.EOF && len(line) == 0 {
			break
		}
		if err != nil {
			return n > 0, changed(n)
		}
		body := bytes.TrimSuffix(line, []byte{'\n'})
		sf, ms = facts.Fact{}, facts.FastMembers{}
		fact := &sf
		linesDecoded.Add(1)
		if facts.FastDecodeInto(&sf, body, unsafe.String(unsafe.SliceData(body), len(body)), &ms) && sf.ID != "" && sf.Kind != "" {
			sf.Raw = line // with its newline, as Parse keeps it
		} else if fact, err = facts.Parse(line); err != nil {
			return n > 0, changed(n)
		}
		n++
		if err := fn(fact); err != nil {
			return true, err
		}
	}
	return true, nil
}

// changed is the error of a mirror found damaged after n facts were
// handed on: none, and the caller reads the ledger another way.
func changed(n int) error {
	if n == 0 {
		return nil
	}
	return errMirrorChanged
}
