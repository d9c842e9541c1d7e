package ledger

import (
	"bytes"
	"hash/crc32"
	"io"
	"math"
	"sort"

	"github.com/git-rally/git-rally/facts"
)

// Tail returns the last n facts (in (clock, id) order) for which keep is
// true (nil keeps all), reading the mirror from its end: `log -n 10` of a
// 100k-fact ledger decodes a few facts, not all of them. The mirror is
// kept in (clock, id) order (cache.save sorts what it writes and each
// batch comes after everything before it). n <= 0 means every fact.
func (l *Ledger) Tail(n int, keep func(*facts.Fact) bool) ([]*facts.Fact, error) {
	return l.tail(n, "", "", keep)
}

// TailOf returns the last n facts of the kind and by the tool given ("":
// any), in (clock, id) order. It reads the mirror's index from its end
// and decodes only the facts the index says match: `log -n 10 --kind
// claim` costs ten decodes whatever the ledger's size. n <= 0 means
// every such fact (and decodes those only).
func (l *Ledger) TailOf(n int, kind, tool string) ([]*facts.Fact, error) {
	var keep func(*facts.Fact) bool
	if kind != "" || tool != "" {
		keep = func(f *facts.Fact) bool { return (kind == "" || f.Kind == kind) && (tool == "" || f.Tool == tool) }
	}
	return l.tail(n, kind, tool, keep)
}

// tail is Tail; kind and tool, when given, are what keep keeps.
func (l *Ledger) tail(n int, kind, tool string, keep func(*facts.Fact) bool) ([]*facts.Fact, error) {
	st, err := l.readMirror()
	if err != nil {
		return nil, err
	}
	if st.Head == "" {
		return nil, nil
	}
	if n > 0 && (keep == nil || kind != "" || tool != "") {
		if fs, ok := l.cache.indexTail(st, n, kind, tool); ok {
			return fs, nil
		}
	}
	if n <= 0 && (kind != "" || tool != "") {
		// Every fact of a kind or a tool: only those are decoded.
		if fs, ok := l.cache.indexTail(st, math.MaxInt, kind, tool); ok {
			return fs, nil
		}
	}
	if n > 0 {
		if fs, ok := l.cache.tail(st, n, keep, nil); ok {
			return fs, nil
		}
	}
	all, err := l.All()
	if err != nil {
		return nil, err
	}
	var out []*facts.Fact
	for _, f := range all {
		if keep == nil || keep(f) {
			out = append(out, f)
		}
	}
	if n > 0 && len(out) > n {
		out = out[len(out)-n:]
	}
	return out, nil
}

// After returns the facts that sort after k ((clock, id) order), in
// order, reading the mirror from its end until it meets k: `watch
// --since` costs the facts after the one it names, not the history
// (every fact was decoded and held: 1 GB at a million facts).
func (l *Ledger) After(k facts.Key) ([]*facts.Fact, error) {
	st, err := l.readMirror()
	if err != nil {
		return nil, err
	}
	if st.Head == "" {
		return nil, nil
	}
	if fs, ok := l.cache.tail(st, math.MaxInt, nil, func(f *facts.Fact) bool { return !k.Less(f.Key()) }); ok {
		return fs, nil
	}
	var out []*facts.Fact
	err = l.Each("", "", func(f *facts.Fact) error {
		if k.Less(f.Key()) {
			g, err := facts.Parse(f.Raw)
			if err != nil {
				return err
			}
			out = append(out, g)
		}
		return nil
	})
	return out, err
}

// tailChunk is how much of the mirror tail reads at a time (a variable
// so a test can make lines straddle chunks).
var tailChunk = 64 << 10

// tail reads the mirror of st backwards in chunks. The whole file is
// first checked against its CRC, streamed, so memory stays at a chunk.
// It stops at n facts kept, or at the first fact (from the end) for
// which until (nil: none) is true, which it leaves out.
func (c *cache) tail(st *facts.State, n int, keep, until func(*facts.Fact) bool) ([]*facts.Fact, bool) {
	f, ok := c.openMirror(st)
	if !ok {
		return nil, false
	}
	defer f.Close()
	size := c.saved.MirrorLen
	h := crc32.New(crcTable)
	mirrorRead.Add(size)
	if m, err := io.CopyN(h, f, size); err != nil || m != size || h.Sum32() != c.saved.MirrorSum {
		return nil, false
	}
	chunk := int64(tailChunk)
	var out []*facts.Fact
	var carry []byte // the start of a line whose end was read already
	stopped := false
	for end := size; end > 0 && len(out) < n && !stopped; {
		start := end - chunk
		if start < 0 {
			start = 0
		}
		buf := make([]byte, end-start, int(end-start)+len(carry))
		if _, err := f.ReadAt(buf, start); err != nil && err != io.EOF {
			return nil, false
		}
		buf = append(buf, carry...)
		// Lines that end in this chunk, last first; the first partial one
		// waits for the previous chunk.
		lines := bytes.Split(bytes.TrimSuffix(buf, []byte("\n")), []byte("\n"))
		first := 0
		if start > 0 {
			carry = append([]byte(nil), lines[0]...)
			carry = append(carry, '\n')
			first = 1
		} else {
			carry = nil
		}
		for i := len(lines) - 1; i >= first && len(out) < n; i-- {
			if len(lines[i]) == 0 {
				continue
			}
			linesDecoded.Add(1)
			fact, err := facts.Parse(lines[i])
			if err != nil {
				return nil, false
			}
			if until != nil && until(fact) {
				stopped = true
				break
			}
			if keep == nil || keep(fact) {
				out = append(out, fact)
			}
		}
		end = start
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key().Less(out[j].Key()) })
	return out, true
}
