package refs

import (
	"crypto/sha1"
	"hash"
	"strconv"
	"sync/atomic"
)

// ObjectsRead counts the objects this process read in-process (loose or
// packed); with StreamedBlobs, what a read asked of the object store
// (tests count them).
var ObjectsRead atomic.Int64

// An ObjectHasher computes git object ids from contents, as git does,
// without writing anything: a reader checks derived data against the ids
// a tree names. It reuses its buffers; one per goroutine.
//
// It is the standard library's SHA-1 (SHA-NI: at a million facts 0.1 s
// where go-git's collision-detecting sha1cd took 0.5 s of a cold read).
// Collision detection would add nothing here: the id it checks against
// is an object's in the repository, which git (index-pack, fast-import)
// or go-git hashed with detection when it was written, so it is no
// member of a collision pair, and matching it with other content takes a
// second preimage.
type ObjectHasher struct {
	h    hash.Hash
	hdr  []byte
	tree []byte
	sumb []byte
}

// NewObjectHasher returns a hasher.
func NewObjectHasher() *ObjectHasher {
	return &ObjectHasher{h: sha1.New()}
}

func (o *ObjectHasher) sum(kind string, data []byte) Hash {
	o.h.Reset()
	o.hdr = append(append(append(o.hdr[:0], kind...), ' '), strconv.Itoa(len(data))...)
	o.hdr = append(o.hdr, 0)
	o.h.Write(o.hdr)
	o.h.Write(data)
	o.sumb = o.h.Sum(o.sumb[:0]) // into a buffer kept: a Hash's array would escape, 24 bytes a line
	var out Hash
	copy(out[:], o.sumb)
	return out
}

// BlobID is the id git gives a blob holding data.
func (o *ObjectHasher) BlobID(data []byte) Hash { return o.sum("blob", data) }

// TreeID is the id git gives a tree of entries; they must be in git's
// order (Store.WriteTree's), else ok is false.
func (o *ObjectHasher) TreeID(entries []Entry) (h Hash, ok bool) {
	for i := 1; i < len(entries); i++ {
		if !entryLess(entries[i-1], entries[i]) {
			return h, false
		}
	}
	o.tree = o.tree[:0]
	for _, e := range entries {
		o.tree = append(o.tree, gitMode(e)...)
		o.tree = append(o.tree, ' ')
		o.tree = append(o.tree, e.Name...)
		o.tree = append(o.tree, 0)
		o.tree = append(o.tree, e.Hash[:]...)
	}
	return o.sum("tree", o.tree), true
}

// entryLess orders two entries as git sorts a tree (sortEntries).
func entryLess(a, b Entry) bool {
	ka, kb := a.Name, b.Name
	if a.Dir {
		ka += "/"
	}
	if b.Dir {
		kb += "/"
	}
	return ka < kb
}
