package refs

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"sync"
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
	err   error     // of a process that could not start
	run   int       // InRuns: ids per process, 0 streams
	held  []heldReq // InRuns: the ids asked for, until Close
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

// heldReq is an id an InRuns stream holds: its index and the order it was
// added in (28 bytes; 32k of them for each doctor chunk).
type heldReq struct {
	h      Hash
	i, seq uint32
}

// NewBlobStream returns a stream that calls fn with each blob's index and
// content (fn's to keep), from several goroutines at once.
func (st *Store) NewBlobStream(fn func(i int, data []byte)) *BlobStream {
	return &BlobStream{st: st, fn: fn, limit: min(max(1, runtime.GOMAXPROCS(0)), 4)}
}

// InRuns has the stream hold the ids until Close, then deal them by
// their ids into runs of k, each the ids of a range, read through a
// cat-file of its own (up to one per core at once) in the order they
// were added: for a reader of many blobs in no useful order of ids
// (doctor). git maps a pack's index whole, and the pages a lookup touches
// count in its RSS: a few hundred lookups at random touch nearly all of
// it (30 MB at a million objects), where the lookups of a run touch the
// part of the index its range covers. The order they were added in (a
// tree's) is near the pack's: in the order of their ids, each blob is in
// another part of the pack, and git maps a window a blob (a cat-file of
// 65k ids spent 0.8 s in mmap and munmap in small windows, none in the
// tree's order). A stream that overlaps the listing of its ids (a cold
// read) streams instead.
// n is the number of ids to come (the held ids' capacity); the indexes
// are below 2^32.
func (bs *BlobStream) InRuns(k, n int) *BlobStream {
	bs.run, bs.held = max(1, k), make([]heldReq, 0, n)
	return bs
}

// blobRunDone, when set, is called with the ids of each run of InRuns
// (tests).
var blobRunDone func(ids []Hash)

// Add asks for blob h as index i. Add is called from one goroutine.
func (bs *BlobStream) Add(i int, h Hash) {
	if bs.err != nil {
		return
	}
	if bs.run > 0 {
		bs.held = append(bs.held, heldReq{h, uint32(i), uint32(len(bs.held))})
		return
	}
	if bs.n%streamChunk == 0 {
		if bs.cur != nil {
			bs.cur.flush()
		}
		c := bs.n / streamChunk
		if want := min(bs.limit, c*streamChunk/BatchThreshold+1); len(bs.procs) < want {
			p, err := bs.start(1<<14, 256<<10)
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
	if bs.run > 0 {
		return bs.closeRuns()
	}
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
		errs = append(errs, p.wait())
	}
	return errors.Join(errs...)
}

// closeRuns reads the held ids in order, a cat-file per run.
func (bs *BlobStream) closeRuns() error {
	held := bs.held
	bs.held = nil
	slices.SortFunc(held, func(a, b heldReq) int { return bytes.Compare(a.h[:], b.h[:]) })
	runs := make(chan []heldReq)
	errs := make([]error, bs.limit)
	var wg sync.WaitGroup
	for w := 0; w < bs.limit; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range runs {
				if errs[w] == nil {
					errs[w] = bs.readRun(r)
				}
			}
		}()
	}
	for lo := 0; lo < len(held); lo += bs.run {
		r := held[lo:min(lo+bs.run, len(held))]
		// In the order they were added (a tree's: near the pack's), so
		// that git reads the pack forward, not a window a blob.
		slices.SortFunc(r, func(a, b heldReq) int { return cmp.Compare(a.seq, b.seq) })
		runs <- r
	}
	close(runs)
	wg.Wait()
	return errors.Join(errs...)
}

// readRun reads the blobs of rs through a cat-file of its own.
func (bs *BlobStream) readRun(rs []heldReq) error {
	if blobRunDone != nil {
		ids := make([]Hash, len(rs))
		for k, r := range rs {
			ids[k] = r.h
		}
		blobRunDone(ids)
	}
	p, err := bs.start(len(rs), 64<<10) // every id is written before git answers
	if err != nil {
		return err
	}
	for _, r := range rs {
		p.add(int(r.i), r.h)
	}
	p.flush()
	close(p.q)
	if err := p.in.Close(); err != nil && p.werr == nil {
		p.werr = err
	}
	<-p.done
	return p.wait()
}

// wait waits for the cat-file and returns its error, the reader's first.
func (p *blobProc) wait() error {
	werr := p.cmd.Wait()
	switch {
	case p.err != nil:
		return p.err
	case werr != nil:
		code := -1
		if ee, ok := werr.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return &GitError{Args: p.cmd.Args[1:], Code: code, Stderr: p.errb.String()}
	case p.werr != nil:
		return fmt.Errorf("cat-file: writing ids: %w", p.werr)
	}
	return nil
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

// start starts a cat-file of the stream, queue ids ahead at most, its
// output read through a buffer of rbuf bytes.
func (bs *BlobStream) start(queue, rbuf int) (*blobProc, error) {
	p := &blobProc{q: make(chan blobReq, queue), done: make(chan struct{})}
	p.line[40] = '\n'
	cmd, in, out, err := bs.st.startCatFile(&p.errb, "--batch", "--buffer")
	if err != nil {
		return nil, err
	}
	p.cmd, p.in, p.bw = cmd, in, bufio.NewWriterSize(in, 16<<10)
	go p.read(bufio.NewReaderSize(out, rbuf), bs.fn)
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
func (p *blobProc) read(br *bufio.Reader, fn func(i int, data []byte)) {
	defer close(p.done)
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
