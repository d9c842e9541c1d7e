package refs

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// An ExistCheck asks `git cat-file --batch-check --buffer` whether
// objects are present, without reading them. doctor checks a history's
// objects with it, in pack windows the store chooses (Windows), where
// `git rev-list --objects` held every object of the history at once (147
// MB at a million facts).
//
// The ids are asked at Close, each run of ids within a range of ids of a
// cat-file of its own: git maps a pack's index whole and the pages a
// lookup touches count in its RSS, and a few hundred lookups at random
// touch nearly all of it (a million ids asked in the history's order
// peaked at 33 MB at a million objects), where a range of ids touches
// the part of the index it covers. Up to existHold ids are held and asked
// of one cat-file; past that they are spilled to existBuckets temporary
// files by their first byte, and Close asks consecutive buckets together
// up to existRun ids (a bucket larger than that is sorted and asked in
// runs of existRun), two cat-files at once: what one cat-file touches of the index is bounded by
// existRun, not by the history. A run is asked in the order its ids were
// added (a walk's: near the pack's), so that git reads the pack forward:
// in the order of the ids each is in another part of the pack, and git
// maps a window an id (65k ids cost 0.8 s of mmap and munmap).
type ExistCheck struct {
	st      *Store
	held    []seqHash
	seq     uint32
	dir     string // the buckets' directory once spilled
	buckets [existBuckets]*bufio.Writer
	files   [existBuckets]*os.File
	counts  [existBuckets]int
	werr    error
}

const existBuckets = 256

// existHold is the most ids a check holds before it spills them, and
// existRun the most a cat-file is asked (at a million objects, 16k ids of
// a range peaked at 9 MB).
var (
	existHold = 1 << 13
	existRun  = 1 << 14
)

type seqHash struct {
	seq uint32
	h   Hash
}

// existRunDone, when set, is called with the ids of each cat-file's run
// (tests).
var existRunDone func(ids []Hash)

// NewExistCheck returns a check; git runs at Close.
func (st *Store) NewExistCheck() (*ExistCheck, error) {
	return &ExistCheck{st: st}, nil
}

// Add asks whether h is present. Add is called from one goroutine.
func (x *ExistCheck) Add(h Hash) {
	if x.werr != nil {
		return
	}
	x.seq++
	if x.dir == "" {
		x.held = append(x.held, seqHash{x.seq, h})
		if len(x.held) <= existHold {
			return
		}
		if x.dir, x.werr = os.MkdirTemp("", "rally-exist-"); x.werr != nil {
			x.dir = ""
			return
		}
		held := x.held
		x.held = nil
		for _, sh := range held {
			x.spill(sh)
		}
		return
	}
	x.spill(seqHash{x.seq, h})
}

// spill writes sh to its bucket.
func (x *ExistCheck) spill(sh seqHash) {
	b := sh.h[0]
	if x.buckets[b] == nil {
		f, err := os.Create(filepath.Join(x.dir, fmt.Sprintf("%02x", b)))
		if err != nil {
			x.werr = err
			return
		}
		x.files[b], x.buckets[b] = f, bufio.NewWriterSize(f, 1<<10)
	}
	var rec [24]byte
	binary.BigEndian.PutUint32(rec[:4], sh.seq)
	copy(rec[4:], sh.h[:])
	if _, err := x.buckets[b].Write(rec[:]); err != nil {
		x.werr = err
		return
	}
	x.counts[b]++
}

// Close asks for every id added and returns how many of the objects
// asked for are missing; an error is git's, the pipe's or the buckets'.
func (x *ExistCheck) Close() (int, error) {
	defer x.cleanup()
	if x.werr != nil {
		return 0, fmt.Errorf("cat-file --batch-check: spilling ids: %w", x.werr)
	}
	if x.dir == "" {
		return x.st.checkRun(x.held)
	}
	for b, w := range x.buckets {
		if w == nil {
			continue
		}
		if err := w.Flush(); err != nil {
			return 0, fmt.Errorf("cat-file --batch-check: spilling ids: %w", err)
		}
		if _, err := x.files[b].Seek(0, io.SeekStart); err != nil {
			return 0, err
		}
	}
	// The runs are asked by up to two cat-files at once.
	var missing atomic.Int64
	var errs [2]error
	runs := make(chan []seqHash)
	var wg sync.WaitGroup
	for w := range min(max(1, runtime.GOMAXPROCS(0)), len(errs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range runs {
				if errs[w] == nil {
					m, err := x.st.checkRun(r)
					missing.Add(int64(m))
					errs[w] = err
				}
			}
		}()
	}
	finish := func(err error) (int, error) {
		close(runs)
		wg.Wait()
		return int(missing.Load()), errors.Join(err, errs[0], errs[1])
	}
	run := make([]seqHash, 0, existRun)
	ask := func() {
		if len(run) > existRun {
			slices.SortFunc(run, func(a, b seqHash) int { return bytes.Compare(a.h[:], b.h[:]) })
		}
		for lo := 0; lo < len(run); lo += existRun {
			r := slices.Clone(run[lo:min(lo+existRun, len(run))])
			slices.SortFunc(r, func(a, b seqHash) int { return cmp.Compare(a.seq, b.seq) })
			runs <- r
		}
		run = run[:0]
	}
	for b := range existBuckets {
		if x.counts[b] == 0 {
			continue
		}
		if len(run) > 0 && len(run)+x.counts[b] > existRun {
			ask()
		}
		br := bufio.NewReaderSize(x.files[b], 1<<10)
		for k := 0; k < x.counts[b]; k++ {
			var rec [24]byte
			if _, err := io.ReadFull(br, rec[:]); err != nil {
				return finish(fmt.Errorf("cat-file --batch-check: reading spilled ids: %w", err))
			}
			run = append(run, seqHash{binary.BigEndian.Uint32(rec[:4]), Hash(rec[4:])})
		}
	}
	ask()
	return finish(nil)
}

func (x *ExistCheck) cleanup() {
	for _, f := range x.files {
		if f != nil {
			f.Close()
		}
	}
	if x.dir != "" {
		os.RemoveAll(x.dir)
	}
}

// checkRun asks one cat-file whether the objects ids are present, in
// their order, and returns how many are missing.
func (st *Store) checkRun(ids []seqHash) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	if existRunDone != nil {
		hs := make([]Hash, len(ids))
		for k, sh := range ids {
			hs[k] = sh.h
		}
		existRunDone(hs)
	}
	var errb bytes.Buffer
	cmd, in, out, err := st.startCatFile(&errb, "--batch-check", "--buffer")
	if err != nil {
		return 0, err
	}
	var werr error
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		bw := bufio.NewWriterSize(in, 64<<10)
		var line [41]byte
		line[40] = '\n'
		for _, sh := range ids {
			hex.Encode(line[:40], sh.h[:])
			if _, werr = bw.Write(line[:]); werr != nil {
				break
			}
		}
		if werr == nil {
			werr = bw.Flush()
		}
		if err := in.Close(); err != nil && werr == nil {
			werr = err
		}
	}()
	missing, answered := 0, 0
	var rerr error
	br := bufio.NewReaderSize(out, 64<<10)
	for {
		line, err := br.ReadSlice('\n')
		if err == io.EOF && len(line) == 0 {
			break
		}
		if err != nil {
			rerr = fmt.Errorf("cat-file --batch-check: %w", err)
			io.Copy(io.Discard, br)
			break
		}
		answered++
		if bytes.HasSuffix(line, []byte(" missing\n")) {
			missing++
		}
	}
	<-wrote
	cerr := cmd.Wait()
	switch {
	case rerr != nil:
		return missing, rerr
	case cerr != nil:
		return missing, &GitError{Args: []string{"cat-file", "--batch-check"}, Code: -1, Stderr: errb.String()}
	case werr != nil:
		return missing, fmt.Errorf("cat-file --batch-check: writing ids: %w", werr)
	case answered != len(ids):
		return missing, errors.New("cat-file --batch-check: fewer answers than ids")
	}
	return missing, nil
}
