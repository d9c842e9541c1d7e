package refs

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"os/exec"
)

// An ExistCheck asks one `git cat-file --batch-check --buffer` whether
// objects are present, without reading them: the ids are written as they
// are found and the answers read by a goroutine of its own. doctor checks
// a history's objects with it, in pack windows the store chooses
// (Windows), where `git rev-list --objects` held every object of the
// history at once (147 MB at a million facts).
type ExistCheck struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	bw      *bufio.Writer
	errb    bytes.Buffer
	line    [41]byte
	done    chan struct{}
	missing int   // the reader's
	err     error // the reader's
	werr    error
}

// NewExistCheck starts the cat-file.
func (st *Store) NewExistCheck() (*ExistCheck, error) {
	x := &ExistCheck{done: make(chan struct{})}
	x.line[40] = '\n'
	cmd, in, out, err := st.startCatFile(&x.errb, "--batch-check", "--buffer")
	if err != nil {
		return nil, err
	}
	x.cmd, x.in, x.bw = cmd, in, bufio.NewWriterSize(in, 64<<10)
	go func() {
		defer close(x.done)
		br := bufio.NewReaderSize(out, 64<<10)
		for {
			line, err := br.ReadSlice('\n')
			if err == io.EOF && len(line) == 0 {
				return
			}
			if err != nil {
				x.err = fmt.Errorf("cat-file --batch-check: %w", err)
				io.Copy(io.Discard, br)
				return
			}
			if bytes.HasSuffix(line, []byte(" missing\n")) {
				x.missing++
			}
		}
	}()
	return x, nil
}

// Add asks whether h is present. Add is called from one goroutine.
func (x *ExistCheck) Add(h Hash) {
	if x.werr != nil {
		return
	}
	hex.Encode(x.line[:40], h[:])
	_, x.werr = x.bw.Write(x.line[:])
}

// Close waits for every answer and returns how many of the objects asked
// for are missing; an error is git's or the pipe's.
func (x *ExistCheck) Close() (int, error) {
	if err := x.bw.Flush(); err != nil && x.werr == nil {
		x.werr = err
	}
	if err := x.in.Close(); err != nil && x.werr == nil {
		x.werr = err
	}
	<-x.done
	werr := x.cmd.Wait()
	switch {
	case x.err != nil:
		return x.missing, x.err
	case werr != nil:
		return x.missing, &GitError{Args: []string{"cat-file", "--batch-check"}, Code: -1, Stderr: x.errb.String()}
	case x.werr != nil:
		return x.missing, fmt.Errorf("cat-file --batch-check: writing ids: %w", x.werr)
	}
	return x.missing, nil
}
