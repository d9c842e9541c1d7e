package refs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing"
)

// Read-side limits (SPEC §2): a blob (one fact line) over MaxBlob is
// never inflated past the cap, wherever it is read from (a loose object,
// a pack, git cat-file); other objects stop at MaxObject. A hostile
// remote's zlib bomb or 200 MiB fact line costs a header read.
const (
	MaxBlob   = 1 << 20
	MaxObject = 16 << 20
)

// ErrTooLarge is an object over its read-side limit.
var ErrTooLarge = errors.New("object over rally's read limit")

// TooLargeError names the object over its limit and its declared size.
type TooLargeError struct {
	Hash        Hash
	Size, Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("object %s is %d bytes; rally reads at most %d", e.Hash, e.Size, e.Limit)
}

// Is makes errors.Is(err, ErrTooLarge) hold.
func (e *TooLargeError) Is(t error) bool { return t == ErrTooLarge }

// InflatedBytes counts the object bytes this process inflated in-process
// and the blob bytes it took from cat-file; tests bound it.
var InflatedBytes atomic.Int64

// oversizePrefix starts what a blob stream hands its callback for a blob
// over MaxBlob: a line no fact parses, naming the size.
const oversizePrefix = "\x00rally-oversize-blob "

// oversizeBlob is the stand-in for a blob of size bytes over MaxBlob.
func oversizeBlob(size int64) []byte {
	return []byte(oversizePrefix + strconv.FormatInt(size, 10) + "\n")
}

// Oversize reports whether data is a stream's stand-in for a blob over
// MaxBlob, and the blob's size.
func Oversize(data []byte) (int64, bool) {
	rest, ok := bytes.CutPrefix(data, []byte(oversizePrefix))
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(string(bytes.TrimSuffix(rest, []byte("\n"))), 10, 64)
	return n, err == nil
}

// skipBlob reads past n bytes of cat-file output (a blob over the cap and
// git's newline) without keeping them.
func skipBlob(br *bufio.Reader, n int64) error {
	_, err := br.Discard(int(n))
	return err
}

func limitOf(t plumbing.ObjectType) int64 {
	if t == plumbing.BlobObject {
		return MaxBlob
	}
	return MaxObject
}

// checkPacked refuses a packed object whose declared size is over its
// limit, before go-git inflates it: the pack entry's header holds the
// size of a whole object, or of a delta's instructions, which start with
// the sizes of its base and of its result; a delta's base chain is
// checked the same way.
func (p *packHandle) checkPacked(h plumbing.Hash, off int64) error {
	sc := p.pf.Scanner()
	var resultSize int64 = -1
	for depth := 0; depth < 64; depth++ {
		oh, err := sc.SeekObjectHeader(off)
		if err != nil {
			return nil // go-git reports it
		}
		switch oh.Type {
		case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
			// The chain's end: its type is the object's. A delta's result
			// is held to the type's limit, its base (inflated to apply
			// it) to MaxObject: a small fact may be a delta of a larger
			// blob.
			size, lim := oh.Length, limitOf(oh.Type)
			if resultSize >= 0 {
				if resultSize > lim {
					return &TooLargeError{Hash(h), resultSize, lim}
				}
				size, lim = oh.Length, MaxObject
			}
			if size > lim {
				return &TooLargeError{Hash(h), size, lim}
			}
			return nil
		case plumbing.OFSDeltaObject, plumbing.REFDeltaObject:
			if oh.Length > MaxObject {
				return &TooLargeError{Hash(h), oh.Length, MaxObject}
			}
			var head headWriter
			sc.NextObject(&head) // stops once the sizes are read
			src, rest := leb128(head.b)
			dst, _ := leb128(rest)
			if src > MaxObject || dst > MaxObject {
				return &TooLargeError{Hash(h), max(src, dst), MaxObject}
			}
			if resultSize < 0 {
				resultSize = dst
			}
			if oh.Type == plumbing.OFSDeltaObject {
				off = oh.OffsetReference
			} else if off, err = p.idx.FindOffset(oh.Reference); err != nil {
				return nil // a base in another pack: go-git's to find
			}
		default:
			return nil
		}
	}
	return nil
}

// headWriter keeps the first bytes written to it and then refuses more,
// so inflating a delta stops once its two sizes are read.
type headWriter struct{ b []byte }

var errEnough = errors.New("enough")

func (w *headWriter) Write(p []byte) (int, error) {
	n := min(len(p), 20-len(w.b))
	w.b = append(w.b, p[:n]...)
	if len(w.b) >= 20 {
		return n, errEnough
	}
	return n, nil
}

// leb128 reads git's delta size encoding.
func leb128(b []byte) (int64, []byte) {
	var n int64
	var shift uint
	for i, c := range b {
		n |= int64(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 || shift > 56 {
			return n, b[i+1:]
		}
	}
	return n, nil
}
