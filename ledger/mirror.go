package ledger

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"github.com/git-rally/git-rally/facts"
)

func (c *cache) mirrorPath(gen int) string {
	return filepath.Join(c.dir, fmt.Sprintf("facts-%d.jsonl", gen))
}

// openMirror opens the mirror of the saved state, when that state is st's.
func (c *cache) openMirror(st *facts.State) (*os.File, bool) {
	if c.saved == nil || c.saved.State == nil || c.saved.State.Head != st.Head {
		return nil, false
	}
	f, err := os.Open(c.mirrorPath(c.saved.Gen))
	return f, err == nil
}

// mirrorBytes returns the mirror's lines for the saved state.
func (c *cache) mirrorBytes(st *facts.State) ([]byte, bool) {
	f, ok := c.openMirror(st)
	if !ok {
		return nil, false
	}
	defer f.Close()
	data := make([]byte, c.saved.MirrorLen)
	mirrorRead.Add(c.saved.MirrorLen)
	if _, err := io.ReadFull(f, data); err != nil || crc32.Checksum(data, crcTable) != c.saved.MirrorSum {
		return nil, false
	}
	return data, true
}

// mirror returns the facts of the saved state from the mirror file.
func (c *cache) mirror(st *facts.State) ([]*facts.Fact, bool) {
	data, ok := c.mirrorBytes(st)
	if !ok {
		return nil, false
	}
	out := make([]*facts.Fact, 0, st.Facts)
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return nil, false
		}
		fact, err := facts.Parse(data[:i])
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
func (c *cache) mirrorStore(st *facts.State) (*lineStore, bool) {
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
	var sf facts.Fact
	var ms facts.FastMembers
	for seq := uint32(0); ; seq++ {
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
		sf, ms = facts.Fact{}, facts.FastMembers{}
		fact := &sf
		if !facts.FastDecodeInto(&sf, body, unsafe.String(unsafe.SliceData(body), len(body)), &ms) || sf.ID == "" || sf.Kind == "" {
			if fact, err = facts.Parse(line); err != nil {
				return nil, false
			}
		}
		sc := scanned{clock: fact.Clock, raw: line}
		sc.id, sc.idOK = parseFactID(fact.ID)
		if fact.Kind == facts.KindRetract && fact.Ref != "" {
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
