package ledger

import (
	"errors"
	"slices"
	"strings"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// blobRef is a fact blob found in a tree.
type blobRef struct {
	path string
	hash refs.Hash
}

// diff lists the blobs in newT that are not in oldT, descending only into
// subtrees whose ids differ.
func (l *Ledger) diff(oldT, newT refs.Hash) ([]blobRef, error) {
	return l.diffUpTo(oldT, newT, 0)
}

// errTooMany reports a diff that found more than its limit of new blobs.
var errTooMany = errors.New("more new facts than a catch-up applies")

// diffUpTo is diff that stops with errTooMany once it found more than
// limit new blobs (0: no limit).
func (l *Ledger) diffUpTo(oldT, newT refs.Hash, limit int) ([]blobRef, error) {
	return l.diffWith(l.readTree, oldT, newT, limit)
}

// diffWith is diffUpTo reading trees with readTree.
func (l *Ledger) diffWith(readTree func(refs.Hash) ([]refs.Entry, error), oldT, newT refs.Hash, limit int) ([]blobRef, error) {
	var out []blobRef
	shrank := false
	err := walkDiff(readTree, "", oldT, newT, func(p string, e refs.Entry, had bool) error {
		if had && !isSegmentBlobPath(p) {
			shrank = true // a fact file whose content changed (a segment blob is derived: a merge may write it again)
		}
		if isFactPath(p) {
			if limit > 0 && len(out) >= limit {
				return errTooMany
			}
			out = append(out, blobRef{p, e.Hash})
		}
		return nil
	}, func(p string) {
		// A segment blob is derived: a merge may drop it.
		if !isSegmentBlobPath(p) {
			shrank = true
		}
	})
	if err == nil && shrank {
		err = errShrank
	}
	return out, err
}

// walkDiff calls blob with each blob under tree n (at prefix) that is not
// at its path under tree o (zero: none), had saying that o holds an entry
// of that name, and, when gone is not nil, gone with the path of each
// entry of o that n lacks. Only the subtrees that differ are read.
func walkDiff(readTree func(refs.Hash) ([]refs.Entry, error), prefix string, o, n refs.Hash,
	blob func(p string, e refs.Entry, had bool) error, gone func(p string)) error {
	if o == n {
		return nil
	}
	ne, err := readTree(n)
	if err != nil {
		return err
	}
	var oe []refs.Entry
	if !o.IsZero() {
		if oe, err = readTree(o); err != nil {
			return err
		}
	}
	olds := make(map[string]refs.Entry, len(oe))
	for _, e := range oe {
		olds[e.Name] = e
	}
	if gone != nil && len(oe) > 0 {
		names := make(map[string]bool, len(ne))
		for _, e := range ne {
			names[e.Name] = true
		}
		for _, e := range oe {
			if !names[e.Name] {
				gone(joinPath(prefix, e.Name))
			}
		}
	}
	for _, e := range ne {
		old, had := olds[e.Name]
		if had && old.Hash == e.Hash && old.Dir == e.Dir {
			continue
		}
		p := joinPath(prefix, e.Name)
		if e.Dir {
			var ot refs.Hash
			if had && old.Dir {
				ot = old.Hash
			}
			if err := walkDiff(readTree, p, ot, e.Hash, blob, gone); err != nil {
				return err
			}
			continue
		}
		if err := blob(p, e, had); err != nil {
			return err
		}
	}
	return nil
}

// errShrank reports that the new tree lacks something the old one held:
// the ledger ref was moved back or rewritten by hand. The caller gets the
// added blobs too, but a projection must be rebuilt from scratch.
var errShrank = errors.New("ledger lost facts since the last read")

func joinPath(a, b string) string {
	if a == "" {
		return b
	}
	return a + "/" + b
}

func isFactPath(p string) bool {
	return strings.HasPrefix(p, factsDir+"/") && strings.HasSuffix(p, ".json")
}

func (l *Ledger) readTree(h refs.Hash) ([]refs.Entry, error) {
	if es, ok := l.cache.tree(h); ok {
		return es, nil
	}
	es, err := l.Store.ReadTree(h)
	if err == nil {
		l.cache.remember(h, es)
	}
	return slices.Clip(es), err
}

// readAll returns every fact under a tree.
func (l *Ledger) readAll(tree refs.Hash) ([]*facts.Fact, error) {
	refsList, err := l.diff(refs.ZeroHash, tree)
	if err != nil {
		return nil, err
	}
	return l.parseBlobs(refsList), nil
}
