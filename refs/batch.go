package refs

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// BatchThreshold is the number of blobs from which ReadBlobs asks one
// `git cat-file --batch` instead of go-git: git reads packed objects
// several times faster (it maps the pack index instead of decoding it), so
// a cold rebuild or a sync that brings thousands of facts pays one process
// instead of thousands of slow lookups.
const BatchThreshold = 512

// ReadBlobs returns the contents of the blobs, in order.
func (st *Store) ReadBlobs(hs []Hash) ([][]byte, error) {
	if len(hs) < BatchThreshold {
		out := make([][]byte, len(hs))
		for i, h := range hs {
			b, err := st.ReadBlob(h)
			if err != nil {
				return nil, err
			}
			out[i] = b
		}
		return out, nil
	}
	// Streamed, so a blob over MaxBlob is skipped, never held.
	out := make([][]byte, len(hs))
	tooLarge := map[int]int64{}
	err := st.streamRange(0, len(hs), func(i int) Hash { return hs[i] }, func(i int, data []byte) {
		if size, ok := Oversize(data); ok {
			tooLarge[i] = size
			return
		}
		out[i] = data
	})
	if err != nil {
		return nil, err
	}
	for i, size := range tooLarge {
		return nil, fmt.Errorf("reading blob %s: %w", hs[i], &TooLargeError{hs[i], size, MaxBlob})
	}
	return out, nil
}

// StreamBlobs reads the blobs with one `git cat-file --batch --buffer`
// and calls fn with each blob's index and content as git writes it; the
// content is fn's to keep. Memory stays at what fn keeps.
func (st *Store) StreamBlobs(hs []Hash, fn func(i int, data []byte)) error {
	return st.StreamBlobsOf(len(hs), func(i int) Hash { return hs[i] }, fn)
}

// StreamBlobsOf is StreamBlobs of the n blobs hash(0) ... hash(n-1): the
// ids are written to git as it reads them, never all held as text. A
// large set is split between one cat-file per core (git decompresses an
// object at a time), so fn is called from several goroutines at once.
func (st *Store) StreamBlobsOf(n int, hash func(i int) Hash, fn func(i int, data []byte)) error {
	procs := min(max(1, runtime.GOMAXPROCS(0)), 4, max(1, n/BatchThreshold))
	if procs == 1 {
		return st.streamRange(0, n, hash, fn)
	}
	errs := make([]error, procs)
	var wg sync.WaitGroup
	for p := 0; p < procs; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[p] = st.streamRange(n*p/procs, n*(p+1)/procs, hash, fn)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// streamRange streams the blobs from index lo up to hi with one cat-file.
func (st *Store) streamRange(lo, hi int, hash func(i int) Hash, fn func(i int, data []byte)) error {
	pr, pw := io.Pipe()
	go func() {
		bw := bufio.NewWriterSize(pw, 64<<10)
		var line [41]byte
		line[40] = '\n'
		for i := lo; i < hi; i++ {
			h := hash(i)
			hex.Encode(line[:40], h[:])
			if _, err := bw.Write(line[:]); err != nil {
				return // git stopped reading; its exit says why
			}
		}
		pw.CloseWithError(bw.Flush())
	}()
	defer pr.Close()
	return gitStreamFrom(st.CommonDir, []string{"GIT_DIR=" + st.CommonDir}, pr, func(r io.Reader) error {
		br := bufio.NewReaderSize(r, 256<<10)
		for i := lo; i < hi; i++ {
			h := hash(i)
			line, err := br.ReadSlice('\n')
			if err != nil {
				return fmt.Errorf("cat-file: output ends before %s", h)
			}
			hdr := strings.Fields(string(line))
			if len(hdr) == 2 && hdr[1] == "missing" {
				return fmt.Errorf("blob %s: %w", h, ErrNotFound)
			}
			if len(hdr) != 3 || hdr[0] != h.String() {
				return fmt.Errorf("cat-file: unexpected header %q for %s", strings.Join(hdr, " "), h)
			}
			n, err := strconv.Atoi(hdr[2])
			if err != nil || n < 0 {
				return fmt.Errorf("cat-file: bad size for %s", h)
			}
			if n > MaxBlob {
				if err := skipBlob(br, int64(n)+1); err != nil {
					return fmt.Errorf("cat-file: output ends inside %s", h)
				}
				fn(i, oversizeBlob(int64(n)))
				continue
			}
			InflatedBytes.Add(int64(n))
			data := make([]byte, n+1) // the content and git's newline
			if _, err := io.ReadFull(br, data); err != nil {
				return fmt.Errorf("cat-file: output ends inside %s", h)
			}
			fn(i, data[:n])
		}
		return nil
	}, append(st.windows(), "cat-file", "--batch", "--buffer")...)
}

// WalkTree calls fn with every entry under tree, subtrees included, in
// git's order (a tree comes before what it holds, entries of a tree in
// their stored order), with one `git ls-tree -r -t -z`. path is the
// entry's path from tree, valid during the call only.
func (st *Store) WalkTree(tree Hash, fn func(path []byte, dir bool, h Hash)) error {
	return GitStream(st.CommonDir, []string{"GIT_DIR=" + st.CommonDir}, nil, func(r io.Reader) error {
		br := bufio.NewReaderSize(r, 256<<10)
		for {
			rec, err := br.ReadSlice(0)
			if err == bufio.ErrBufferFull {
				// A path this long is no ledger's (whose paths are a few
				// dozen bytes); one over the cap is skipped, never held.
				long := append([]byte(nil), rec...)
				for err == bufio.ErrBufferFull {
					rec, err = br.ReadSlice(0)
					if len(long) <= MaxBlob {
						long = append(long, rec...)
					}
				}
				if len(long) > MaxBlob {
					continue
				}
				rec = long
			}
			if err == io.EOF && len(rec) == 0 {
				return nil
			}
			if err != nil {
				return fmt.Errorf("ls-tree: %w", err)
			}
			rec = rec[:len(rec)-1]
			// <mode> SP <type> SP <id> TAB <path>
			tab := bytes.IndexByte(rec, '\t')
			var h Hash
			if tab < 42 || rec[tab-41] != ' ' {
				return fmt.Errorf("ls-tree: unexpected line %q", rec)
			}
			if _, err := hex.Decode(h[:], rec[tab-40:tab]); err != nil {
				return fmt.Errorf("ls-tree: unexpected line %q", rec)
			}
			mode, typ, ok := bytes.Cut(rec[:tab-41], []byte(" "))
			if !ok || len(mode) == 0 || len(typ) == 0 || bytes.IndexByte(typ, ' ') >= 0 {
				return fmt.Errorf("ls-tree: unexpected line %q", rec)
			}
			fn(rec[tab+1:], string(typ) == "tree", h)
		}
	}, append(PackWindows(), "ls-tree", "-r", "-t", "-z", "--full-tree", tree.String())...)
}
