package ledger

import (
	"fmt"

	"github.com/git-rally/git-rally/refs"
)

// SealPrefix begins the message of a commit that adds segment blobs and
// no fact (SealClosed).
const SealPrefix = "seal: "

// sealBatch is how many fact blobs SealClosed reads at once: past
// refs.BatchThreshold, through one cat-file.
const sealBatch = 4096

// SealResult is what SealClosed did.
type SealResult struct {
	// Segments counts the segment blobs written (0: none lacked one).
	Segments int
	Head     refs.Hash
}

// closedSegment is a closed segment without a segment blob.
type closedSegment struct {
	day     string // facts/YYYY-MM/DD
	name    string
	entries []refs.Entry
}

// Unsealed counts the closed segments of the ledger's head that have no
// segment blob (segment.go): ledgers written before segment blobs, or
// before every closed segment got one. A cold read reads their fact
// blobs one by one; SealClosed writes their segment blobs.
func (l *Ledger) Unsealed() (int, error) {
	head, err := l.Head()
	if err != nil || head.IsZero() {
		return 0, err
	}
	c, err := l.Store.ReadCommit(head)
	if err != nil {
		return 0, err
	}
	n := 0
	err = l.closedSegments(c.Tree, false, func(closedSegment) { n++ })
	return n, err
}

// closedSegments calls fn with each closed segment of tree that has no
// segment blob: every segment of a day but its last (the one appends go
// on writing), and the last of every day but the newest. With entries,
// fn gets the segment's entries (its tree read).
func (l *Ledger) closedSegments(tree refs.Hash, entries bool, fn func(closedSegment)) error {
	root, err := l.readTree(tree)
	if err != nil {
		return err
	}
	var fh refs.Hash
	for _, e := range root {
		if e.Name == factsDir && e.Dir {
			fh = e.Hash
		}
	}
	if fh.IsZero() {
		return nil
	}
	months, err := l.readTree(fh)
	if err != nil {
		return err
	}
	newestDir := func(es []refs.Entry) string {
		best := ""
		for _, e := range es {
			if e.Dir && e.Name > best {
				best = e.Name
			}
		}
		return best
	}
	lastMonth := newestDir(months)
	for _, m := range months {
		if !m.Dir {
			continue
		}
		days, err := l.readTree(m.Hash)
		if err != nil {
			return err
		}
		lastDay := newestDir(days)
		for _, d := range days {
			if !d.Dir {
				continue
			}
			segs, err := l.readTree(d.Hash)
			if err != nil {
				return err
			}
			last, lastNum := "", -1
			for _, e := range segs {
				if n, ok := segmentNumber(e.Name); ok && e.Dir && (n > lastNum || n == lastNum && e.Name > last) {
					last, lastNum = e.Name, n
				}
			}
			newest := m.Name == lastMonth && d.Name == lastDay
			for _, e := range segs {
				if _, ok := segmentNumber(e.Name); !ok || !e.Dir || newest && e.Name == last || hasEntry(segs, e.Name+segBlobExt) {
					continue
				}
				cs := closedSegment{day: factsDir + "/" + m.Name + "/" + d.Name, name: e.Name}
				if entries {
					if cs.entries, err = l.Store.ReadTree(e.Hash); err != nil {
						return err
					}
				}
				fn(cs)
			}
		}
	}
	return nil
}

// SealClosed writes, in one commit on the ledger with no fact, the
// segment blob of every closed segment that lacks one (Unsealed), so a
// cold read reads each as one blob. Appends write the segment blob of
// the segment they close; this is for ledgers written before they did
// (doctor --repair). The blobs are SealBlob's, as an append writes them.
func (l *Ledger) SealClosed() (SealResult, error) {
	var res SealResult
	if err := l.checkCanWrite(false); err != nil {
		return res, err
	}
	lock, err := l.Store.LockRef(LedgerRef)
	if err != nil {
		return res, err
	}
	defer lock.Unlock()
	if lock.Old.IsZero() {
		return res, nil
	}
	c, err := l.Store.ReadCommit(lock.Old)
	if err != nil {
		return res, err
	}
	var todo []closedSegment
	if err := l.closedSegments(c.Tree, true, func(cs closedSegment) { todo = append(todo, cs) }); err != nil {
		return res, err
	}
	if len(todo) == 0 {
		return res, nil
	}
	// The segment blobs, by day, read sealBatch fact blobs at a time.
	blobs := map[string][]refs.Entry{}
	for len(todo) > 0 {
		n, k := 0, 0
		for k < len(todo) && (k == 0 || n+len(todo[k].entries) <= sealBatch) {
			n += len(todo[k].entries)
			k++
		}
		var hs []refs.Hash
		for _, cs := range todo[:k] {
			for _, e := range cs.entries {
				if !e.Dir {
					hs = append(hs, e.Hash)
				}
			}
		}
		data, err := l.Store.ReadBlobs(hs)
		if err != nil {
			return res, fmt.Errorf("sealing segments: %w", err)
		}
		for _, cs := range todo[:k] {
			names := make([]string, 0, len(cs.entries))
			contents := make([][]byte, 0, len(cs.entries))
			dir := false
			for _, e := range cs.entries {
				if e.Dir {
					dir = true
					continue
				}
				names = append(names, e.Name)
				contents, data = append(contents, data[0]), data[1:]
			}
			sb, ok := SealBlob(names, contents)
			if dir || !ok {
				continue
			}
			h, err := l.Store.WriteBlob(sb)
			if err != nil {
				return res, err
			}
			blobs[cs.day] = append(blobs[cs.day], refs.Entry{Name: cs.name + segBlobExt, Hash: h})
			res.Segments++
		}
		todo = todo[k:]
	}
	if res.Segments == 0 {
		return res, nil
	}
	tree, err := l.withEntries("", c.Tree, blobs)
	if err != nil {
		return res, err
	}
	msg := fmt.Sprintf("%swrote the segment blobs of %d closed segments\n", SealPrefix, res.Segments)
	if res.Segments == 1 {
		msg = SealPrefix + "wrote the segment blob of 1 closed segment\n"
	}
	commit, err := l.commitLocked(lock, refs.Commit{Tree: tree, Parents: []refs.Hash{lock.Old}, Message: msg, When: l.Now().UTC()}, "segment blobs written, but their objects")
	if err != nil {
		return res, err
	}
	res.Head = commit
	return res, nil
}

// withEntries returns tree (at path p) with the entries of add (by the
// path of the tree they go in) added, writing the trees that change.
func (l *Ledger) withEntries(p string, tree refs.Hash, add map[string][]refs.Entry) (refs.Hash, error) {
	es, err := l.readTree(tree)
	if err != nil {
		return refs.ZeroHash, err
	}
	out := es
	changed := false
	for _, e := range add[p] {
		out, changed = replaceEntry(out, e), true
	}
	for i, e := range es {
		if !e.Dir {
			continue
		}
		sub := joinPath(p, e.Name)
		if !hasPrefixIn(add, sub+"/") {
			continue
		}
		h, err := l.withEntries(sub, e.Hash, add)
		if err != nil {
			return refs.ZeroHash, err
		}
		if !changed {
			out = append([]refs.Entry(nil), es...)
			changed = true
		}
		// es[i]'s name is unique: replace it where it is in out.
		for k := range out {
			if out[k].Name == es[i].Name && out[k].Dir {
				out[k].Hash = h
			}
		}
	}
	if !changed {
		return tree, nil
	}
	return l.writeTree(out)
}

func hasPrefixIn(m map[string][]refs.Entry, prefix string) bool {
	for k := range m {
		if k == prefix[:len(prefix)-1] || len(k) > len(prefix) && k[:len(prefix)] == prefix {
			return true
		}
	}
	return false
}
