package refs

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"strconv"
	"sync/atomic"
)

// StreamedBlobs counts the blobs BlobStreams handed over in this process;
// tests use it to show that a rebuild reads each blob once.
var StreamedBlobs atomic.Int64

// A BlobStream reads blobs with `git cat-file --batch --buffer` while
// their ids are still being found: a cold rebuild lists the ledger's tree
// with one ls-tree and hands each fact blob to the stream as ls-tree names
// it, so the blobs are read on the other core while the tree is still
// being listed, instead of after it. Ids are dealt to up to one cat-file
// per core in chunks of streamChunk, a process started for every
// BatchThreshold ids.
type BlobStream struct {
	st    *Store
	fn    func(i int, data []byte)
	limit int
	procs []*blobProc
	cur   *blobProc
	n     int
	err   error // of a process that could not start
}

// streamChunk is the number of consecutive ids sent to one cat-file.
const streamChunk = 256

// blobProc is one cat-file of a stream.
type blobProc struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	bw    *bufio.Writer
	q     chan blobReq // the ids sent, in order, for the reader
	done  chan struct{}
	errb  bytes.Buffer
	err   error // the reader's
	werr  error // writing ids
	line  [41]byte
	dirty bool
	slab  []byte // what is left of the block blobs are cut from
}

// slabSize is the block a cat-file's blobs are cut from: one allocation
// for about a thousand fact blobs instead of one each.
const slabSize = 256 << 10

type blobReq struct {
	i int
	h Hash
}

// NewBlobStream returns a stream that calls fn with each blob's index and
// content (fn's to keep), from several goroutines at once.
func (st *Store) NewBlobStream(fn func(i int, data []byte)) *BlobStream {
	return &BlobStream{st: st, fn: fn, limit: min(max(1, runtime.GOMAXPROCS(0)), 4)}
}

// Add asks for blob h as index i. Add is called from one goroutine.
func (bs *BlobStream) Add(i int, h Hash) {
	if bs.err != nil {
		return
	}
	if bs.n%streamChunk == 0 {
		if bs.cur != nil {
			bs.cur.flush()
		}
		c := bs.n / streamChunk
		if want := min(bs.limit, c*streamChunk/BatchThreshold+1); len(bs.procs) < want {
			p, err := bs.start()
			if err != nil {
				bs.err = err
				return
			}
			bs.procs = append(bs.procs, p)
		}
		bs.cur = bs.procs[c%len(bs.procs)]
	}
	bs.n++
	bs.cur.add(i, h)
}

// Close sends the last ids, waits until every blob asked for was handed
// to fn and returns the first error: a blob missing, git failing.
func (bs *BlobStream) Close() error {
	errs := []error{bs.err}
	for _, p := range bs.procs {
		p.flush()
		close(p.q)
		if err := p.in.Close(); err != nil && p.werr == nil {
			p.werr = err
		}
	}
	for _, p := range bs.procs {
		<-p.done
		werr := p.cmd.Wait()
		switch {
		case p.err != nil:
			errs = append(errs, p.err)
		case werr != nil:
			code := -1
			if ee, ok := werr.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			errs = append(errs, &GitError{Args: p.cmd.Args[1:], Code: code, Stderr: p.errb.String()})
		case p.werr != nil:
			errs = append(errs, fmt.Errorf("cat-file: writing ids: %w", p.werr))
		}
	}
	return errors.Join(errs...)
}

// PackWindows are the options of a git that reads many ledger objects
// (cat-file, ls-tree of a whole ledger): map the packs 16 MiB at a time,
// at most 48 MiB at once, and cache 16 MiB of delta bases. git's defaults
// (1 GiB windows, no limit on 64-bit, 96 MiB of bases) map the whole
// pack, and the pages a read touches count in its RSS: reading the
// million facts of a 157 MB pack, cat-file peaked at 343 MB and ls-tree
// at 229 MB, 107 MB and 128 MB with these, at the same CPU time
// (bench/README.md). A cold read's peak RSS is the largest of its
// processes'.
func PackWindows() []string {
	return []string{"-c", "core.packedGitWindowSize=16m", "-c", "core.packedGitLimit=48m", "-c", "core.deltaBaseCacheLimit=16m"}
}

// SmallPackWindows are pack windows for a git that reads a whole
// ledger's objects once, in no useful order (doctor): 1 MiB windows, at
// most 4 MiB mapped and 2 MiB of delta bases. Reading the million fact
// blobs of a 181 MB pack, cat-file peaked at 37 MB with them, 101 MB
// with PackWindows', for the same CPU time (4.4 and 4.7 s user); most of
// what is left is the pack's index, which git maps whole and a million
// lookups touch all of (30 MB at 1M objects).
func SmallPackWindows() []string {
	return []string{"-c", "core.packedGitWindowSize=1m", "-c", "core.packedGitLimit=4m", "-c", "core.deltaBaseCacheLimit=2m"}
}

func (bs *BlobStream) start() (*blobProc, error) {
	p := &blobProc{q: make(chan blobReq, 1<<14), done: make(chan struct{})}
	p.line[40] = '\n'
	cmd, in, out, err := bs.st.startCatFile(&p.errb, "--batch", "--buffer")
	if err != nil {
		return nil, err
	}
	p.cmd, p.in, p.bw = cmd, in, bufio.NewWriterSize(in, 16<<10)
	go p.read(out, bs.fn)
	return p, nil
}

// add queues h for the reader, then writes it for git: every id git
// answers is in the queue before git can answer it.
func (p *blobProc) add(i int, h Hash) {
	p.q <- blobReq{i, h}
	if p.werr != nil {
		return
	}
	hex.Encode(p.line[:40], h[:])
	_, p.werr = p.bw.Write(p.line[:])
	p.dirty = true
}

func (p *blobProc) flush() {
	if p.dirty && p.werr == nil {
		p.werr = p.bw.Flush()
	}
	p.dirty = false
}

// read hands each blob git writes to fn. After an error it goes on
// emptying the queue and git's output, so that neither Add nor git
// waits for it.
func (p *blobProc) read(out io.Reader, fn func(i int, data []byte)) {
	defer close(p.done)
	br := bufio.NewReaderSize(out, 256<<10)
	drained := make(chan struct{})
	for r := range p.q {
		if p.err != nil {
			continue
		}
		if p.err = p.readEntry(br, r, fn); p.err != nil {
			go func() {
				io.Copy(io.Discard, br)
				close(drained)
			}()
		}
	}
	if p.err != nil {
		<-drained
	}
}

// readEntry reads the answer to r from cat-file --batch output.
func (p *blobProc) readEntry(br *bufio.Reader, r blobReq, fn func(i int, data []byte)) error {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return fmt.Errorf("cat-file: output ends before %s", r.h)
	}
	line = line[:len(line)-1]
	// <id> SP blob SP <size>, or <id> SP missing
	if len(line) > 41 && line[40] == ' ' {
		var h Hash
		if _, err := hex.Decode(h[:], line[:40]); err == nil && h == r.h {
			rest := line[41:]
			if string(rest) == "missing" {
				return fmt.Errorf("blob %s: %w", r.h, ErrNotFound)
			}
			if sp := bytes.IndexByte(rest, ' '); sp > 0 && string(rest[:sp]) == "blob" {
				n, err := strconv.Atoi(string(rest[sp+1:]))
				if err != nil || n < 0 {
					return fmt.Errorf("cat-file: bad size for %s", r.h)
				}
				if n > MaxBlob {
					if err := skipBlob(br, int64(n)+1); err != nil {
						return fmt.Errorf("cat-file: output ends inside %s", r.h)
					}
					StreamedBlobs.Add(1)
					fn(r.i, oversizeBlob(int64(n)))
					return nil
				}
				InflatedBytes.Add(int64(n))
				// The content and git's newline, cut from the slab (its
				// capacity ends with it: fn may append to it).
				if n+1 > len(p.slab) {
					p.slab = make([]byte, max(slabSize, n+1))
				}
				data := p.slab[: n+1 : n+1]
				p.slab = p.slab[n+1:]
				if _, err := io.ReadFull(br, data); err != nil || data[n] != '\n' {
					return fmt.Errorf("cat-file: output ends inside %s", r.h)
				}
				StreamedBlobs.Add(1)
				fn(r.i, data[:n])
				return nil
			}
		}
	}
	return fmt.Errorf("cat-file: unexpected header %q for %s", line, r.h)
}
