package ledger

import (
	"bytes"
	"slices"
	"strings"
	"unsafe"

	"github.com/git-rally/git-rally/refs"
)

// A segment blob is derived data beside a closed segment (one no append
// writes to again: full, or not its day's last, or the last of a day
// before the newest): facts/YYYY-MM/DD/NNNN.jsonl holds the lines of the
// segment NNNN's fact blobs, one a line, in the order of their names. A
// cold read reads it instead of the segment's tree and its blobs, and
// believes it only
// when it rebuilds that tree from it: each line's blob id (git's hash of
// the line) under the name <its id>.json, the tree of those entries
// hashed as git hashes it, equal to the segment's tree id in the day
// tree. Equal ids mean the blob holds exactly the segment's facts, none
// hidden or added; anything else (a stale blob after a merge, a forged
// one) is ignored and the segment's blobs are read, and doctor names it.
// It is a pure function of the segment's facts, so two clones holding
// the same facts write the same blob.

// segBlobExt ends a segment blob's name: the segment's name and it.
const segBlobExt = ".jsonl"

// segmentOfBlob returns the segment a day tree's entry name is the
// segment blob of (NNNN for NNNN.jsonl: decimal digits).
func segmentOfBlob(name string) (string, bool) {
	seg, ok := strings.CutSuffix(name, segBlobExt)
	if !ok || seg == "" {
		return "", false
	}
	for i := 0; i < len(seg); i++ {
		if seg[i] < '0' || seg[i] > '9' {
			return "", false
		}
	}
	return seg, true
}

// isSegmentBlobPath reports whether p is a segment blob in a day tree
// (facts/YYYY-MM/DD/NNNN.jsonl).
func isSegmentBlobPath(p string) bool {
	if !strings.HasPrefix(p, factsDir+"/") || strings.Count(p, "/") != 3 {
		return false
	}
	_, ok := segmentOfBlob(p[strings.LastIndexByte(p, '/')+1:])
	return ok
}

// lineID returns the fact id a stored line names first: the string
// after {"v":<digits>,"id":" up to the next quote, as every line rally
// writes begins. It is only the name a line is looked for under: the
// tree's hash decides whether it is right.
func lineID(line []byte) ([]byte, bool) {
	rest, ok := bytes.CutPrefix(line, []byte(`{"v":`))
	if !ok {
		return nil, false
	}
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	if i == 0 {
		return nil, false
	}
	rest, ok = bytes.CutPrefix(rest[i:], []byte(`,"id":"`))
	if !ok {
		return nil, false
	}
	q := bytes.IndexByte(rest, '"')
	if q <= 0 || bytes.IndexByte(rest[:q], '\\') >= 0 {
		return nil, false
	}
	return rest[:q], true
}

// SegmentBlob returns the segment blob of a full segment whose fact
// blobs are named names and hold contents (in any order), and whether it
// has one: it holds segMax facts or more, and SealBlob makes one of it.
func SegmentBlob(names []string, contents [][]byte) ([]byte, bool) {
	if len(names) < segMax {
		return nil, false
	}
	return SealBlob(names, contents)
}

// SealBlob returns the segment blob of a closed segment (full, or one no
// append writes to again: segment.go) whose fact blobs are named names
// and hold contents (in any order), and whether it has one: it holds a
// fact, every entry is a one-line blob (ending in its only newline)
// named by the id the line begins with and .json, and the blob stays
// within refs.MaxBlob. bench's generator writes ledgers with it, as an
// append does.
func SealBlob(names []string, contents [][]byte) ([]byte, bool) {
	if len(names) == 0 || len(names) != len(contents) {
		return nil, false
	}
	idx := make([]int, len(names))
	n := 0
	for i := range idx {
		idx[i] = i
		c := contents[i]
		if len(c) < 2 || bytes.IndexByte(c, '\n') != len(c)-1 {
			return nil, false
		}
		id, ok := lineID(c)
		if !ok || len(names[i]) != len(id)+5 || names[i][:len(id)] != string(id) || names[i][len(id):] != ".json" {
			return nil, false
		}
		n += len(c)
	}
	if n > refs.MaxBlob {
		return nil, false
	}
	slices.SortFunc(idx, func(a, b int) int { return strings.Compare(names[a], names[b]) })
	out := make([]byte, 0, n)
	for k, i := range idx {
		if k > 0 && names[i] == names[idx[k-1]] {
			return nil, false
		}
		out = append(out, contents[i]...)
	}
	return out, true
}

// segmentChecker checks segment blobs against their segments' tree ids;
// one per goroutine.
type segmentChecker struct {
	h   *refs.ObjectHasher
	es  []refs.Entry
	nm  []byte
	off []int
}

// check reports whether data is exactly the segment whose tree id is seg
// (its lines the segment's blobs under their names, in order), and
// returns where each line starts (valid until the next call).
func (c *segmentChecker) check(data []byte, seg refs.Hash) ([]int, bool) {
	if c.h == nil {
		c.h = refs.NewObjectHasher()
	}
	if len(data) == 0 || data[len(data)-1] != '\n' {
		return nil, false
	}
	c.es, c.nm, c.off = c.es[:0], c.nm[:0], c.off[:0]
	// The names are cut from one buffer, filled first (it must not move
	// under the entries).
	for rest, at := data, 0; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		line := rest[:i+1]
		id, ok := lineID(line)
		if !ok {
			return nil, false
		}
		c.off = append(c.off, at)
		c.nm = append(append(c.nm, id...), ".json"...)
		at += i + 1
		rest = rest[i+1:]
	}
	var prev int
	for k, at := range c.off {
		end := len(data)
		if k+1 < len(c.off) {
			end = c.off[k+1]
		}
		line := data[at:end]
		id, _ := lineID(line)
		n := len(id) + 5
		name := c.nm[prev : prev+n]
		prev += n
		c.es = append(c.es, refs.Entry{Name: unsafe.String(unsafe.SliceData(name), len(name)), Hash: c.h.BlobID(line)})
	}
	h, ok := c.h.TreeID(c.es)
	if !ok || h != seg {
		return nil, false
	}
	return c.off, true
}
