package refs

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"sync/atomic"
)

// An ObjectReader reads objects one at a time through one
// `git cat-file --batch`, each answered before the next is asked. A cold
// read lists a large ledger's trees with it: in-process, the first read
// of a packed object loads the pack's index (go-git's, and the offsets
// table: about 70 MB at a million facts, held to the end of the read).
type ObjectReader struct {
	st     *Store
	budget int // reads a cat-file serves before the next is started; 0: no end
	reads  int // by this cat-file
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	errb   bytes.Buffer
	line   [41]byte
	err    error
}

// NewObjectReader starts the cat-file. When the store has a ReadBudget,
// a new cat-file is started after each ReadBudget reads.
func (st *Store) NewObjectReader() (*ObjectReader, error) {
	r := &ObjectReader{st: st, budget: st.ReadBudget}
	r.line[40] = '\n'
	if err := r.start(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *ObjectReader) start() error {
	r.errb.Reset()
	cmd, in, out, err := r.st.startCatFile(&r.errb, "--batch")
	if err != nil {
		return err
	}
	r.cmd, r.in, r.out, r.reads = cmd, in, bufio.NewReaderSize(out, 64<<10), 0
	return nil
}

// read returns the content of object h, which must be of type kind.
func (r *ObjectReader) read(kind string, h Hash) ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	fail := func(err error) ([]byte, error) {
		r.err = err
		return nil, err
	}
	if r.budget > 0 && r.reads >= r.budget {
		if err := r.Close(); err != nil {
			return fail(fmt.Errorf("cat-file: %w", err))
		}
		if err := r.start(); err != nil {
			return fail(err)
		}
	}
	r.reads++
	hex.Encode(r.line[:40], h[:])
	if _, err := r.in.Write(r.line[:]); err != nil {
		return fail(fmt.Errorf("cat-file: %w", err))
	}
	hdr, err := r.out.ReadSlice('\n')
	if err != nil {
		return fail(fmt.Errorf("cat-file: output ends before %s: %s", h, bytes.TrimSpace(r.errb.Bytes())))
	}
	f := bytes.Fields(hdr)
	if len(f) == 2 && string(f[1]) == "missing" {
		return nil, fmt.Errorf("%s %s: %w", kind, h, ErrNotFound)
	}
	if len(f) != 3 || string(f[0]) != h.String() {
		return fail(fmt.Errorf("cat-file: unexpected header %q for %s", bytes.TrimSpace(hdr), h))
	}
	n, err := strconv.Atoi(string(f[2]))
	if err != nil || n < 0 {
		return fail(fmt.Errorf("cat-file: bad size for %s", h))
	}
	typ := string(f[1])
	if n > MaxObject {
		if err := skipBlob(r.out, int64(n)+1); err != nil {
			return fail(fmt.Errorf("cat-file: output ends inside %s", h))
		}
		return nil, fmt.Errorf("reading %s %s: %w", kind, h, &TooLargeError{h, int64(n), MaxObject})
	}
	data := make([]byte, n+1)
	if _, err := io.ReadFull(r.out, data); err != nil || data[n] != '\n' {
		return fail(fmt.Errorf("cat-file: output ends inside %s", h))
	}
	ObjectsRead.Add(1)
	CatFileReads.Add(1)
	InflatedBytes.Add(int64(n))
	if typ != kind {
		return nil, fmt.Errorf("%s %s: is a %s: %w", kind, h, typ, ErrNotFound)
	}
	return data[:n], nil
}

// ReadTree returns a tree's entries in git order.
func (r *ObjectReader) ReadTree(h Hash) ([]Entry, error) {
	b, err := r.read("tree", h)
	if err != nil {
		return nil, err
	}
	out, err := decodeTree(b)
	if err != nil {
		return nil, fmt.Errorf("decoding tree %s: %w", h, err)
	}
	return out, nil
}

// CatFileReads counts the objects ObjectReaders read (tests count them).
var CatFileReads atomic.Int64

// ReadBlob returns a blob's content.
func (r *ObjectReader) ReadBlob(h Hash) ([]byte, error) { return r.read("blob", h) }

// ReadCommit reads a commit.
func (r *ObjectReader) ReadCommit(h Hash) (Commit, error) {
	b, err := r.read("commit", h)
	if err != nil {
		return Commit{}, err
	}
	c, _, _, err := decodeCommit(b)
	if err != nil {
		return Commit{}, fmt.Errorf("decoding commit %s: %w", h, err)
	}
	return c, nil
}

// Close ends the cat-file.
func (r *ObjectReader) Close() error {
	r.in.Close()
	io.Copy(io.Discard, r.out)
	return r.cmd.Wait()
}
