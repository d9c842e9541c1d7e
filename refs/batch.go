package refs

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
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
	var in bytes.Buffer
	for _, h := range hs {
		in.WriteString(h.String())
		in.WriteByte('\n')
	}
	raw, err := GitInput(st.CommonDir, []string{"GIT_DIR=" + st.CommonDir}, in.Bytes(), "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	return parseBatch(raw, hs)
}

// StreamBlobs reads the blobs with one `git cat-file --batch --buffer`
// and calls fn with each blob's index and content as git writes it; the
// content is fn's to keep. Memory stays at what fn keeps.
func (st *Store) StreamBlobs(hs []Hash, fn func(i int, data []byte)) error {
	var in bytes.Buffer
	for _, h := range hs {
		in.WriteString(h.String())
		in.WriteByte('\n')
	}
	return GitStream(st.CommonDir, []string{"GIT_DIR=" + st.CommonDir}, in.Bytes(), func(r io.Reader) error {
		br := bufio.NewReaderSize(r, 256<<10)
		for i, h := range hs {
			line, err := br.ReadString('\n')
			if err != nil {
				return fmt.Errorf("cat-file: output ends before %s", h)
			}
			hdr := strings.Fields(line)
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
			data := make([]byte, n+1) // the content and git's newline
			if _, err := io.ReadFull(br, data); err != nil {
				return fmt.Errorf("cat-file: output ends inside %s", h)
			}
			fn(i, data[:n])
		}
		return nil
	}, "cat-file", "--batch", "--buffer")
}

// parseBatch splits `git cat-file --batch` output: for each object a line
// "<id> <type> <size>", the content and a newline, or "<id> missing".
func parseBatch(raw string, hs []Hash) ([][]byte, error) {
	out := make([][]byte, len(hs))
	for i, h := range hs {
		nl := strings.IndexByte(raw, '\n')
		if nl < 0 {
			return nil, fmt.Errorf("cat-file: output ends before %s", h)
		}
		hdr := strings.Fields(raw[:nl])
		raw = raw[nl+1:]
		if len(hdr) == 2 && hdr[1] == "missing" {
			return nil, fmt.Errorf("blob %s: %w", h, ErrNotFound)
		}
		if len(hdr) != 3 || hdr[0] != h.String() {
			return nil, fmt.Errorf("cat-file: unexpected header %q for %s", strings.Join(hdr, " "), h)
		}
		n, err := strconv.Atoi(hdr[2])
		if err != nil || n < 0 || n+1 > len(raw) {
			return nil, fmt.Errorf("cat-file: bad size for %s", h)
		}
		out[i] = []byte(raw[:n])
		raw = raw[n+1:]
	}
	return out, nil
}
