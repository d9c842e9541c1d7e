package refs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// Hash is a git object id.
type Hash [20]byte

// ZeroHash is the id of no object: an absent ref.
var ZeroHash Hash

// ErrNotFound is returned for an object that is not in the store.
var ErrNotFound = errors.New("object not found")

// ParseHash reads a 40-hex object id.
func ParseHash(s string) (Hash, error) {
	s = strings.TrimSpace(s)
	if len(s) != 40 {
		return ZeroHash, fmt.Errorf("bad object id %q", s)
	}
	h := plumbing.NewHash(s)
	if h.String() != strings.ToLower(s) {
		return ZeroHash, fmt.Errorf("bad object id %q", s)
	}
	return Hash(h), nil
}

func (h Hash) String() string { return plumbing.Hash(h).String() }

// IsZero reports whether h is the zero id.
func (h Hash) IsZero() bool { return h == ZeroHash }

// Entry is one tree entry. Dir entries point at trees, the others at blobs.
type Entry struct {
	Name string
	Dir  bool
	Hash Hash
}

// Commit is the part of a commit the ledger uses.
type Commit struct {
	Tree    Hash
	Parents []Hash
	Message string
	When    time.Time
}

// Store reads and writes objects in a repository's common dir.
type Store struct {
	CommonDir string
	s         *filesystem.Storage
}

// Open opens the object store of the repository whose common dir is given.
// The storer is built directly on the common dir: go-git's PlainOpen refuses
// repositories with extensions it does not know (sparse checkouts set
// extensions.worktreeConfig) and, opened from a linked worktree without the
// common dir, writes objects into the worktree's private dir.
func Open(commonDir string) (*Store, error) {
	if fi, err := os.Stat(commonDir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("opening object store: %s is not a git directory", commonDir)
	}
	fs := osfs.New(commonDir)
	st := filesystem.NewStorageWithOptions(fs, cache.NewObjectLRU(8*cache.MiByte),
		filesystem.Options{KeepDescriptors: true})
	return &Store{CommonDir: commonDir, s: st}, nil
}

// Close releases pack file descriptors.
func (st *Store) Close() error { return st.s.Close() }

func (st *Store) put(t plumbing.ObjectType, data []byte) (Hash, error) {
	obj := st.s.NewEncodedObject()
	obj.SetType(t)
	obj.SetSize(int64(len(data)))
	w, err := obj.Writer()
	if err != nil {
		return ZeroHash, err
	}
	if _, err := w.Write(data); err != nil {
		return ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return ZeroHash, err
	}
	h, err := st.s.SetEncodedObject(obj)
	if err != nil {
		return ZeroHash, fmt.Errorf("writing %s object: %w", t, err)
	}
	return Hash(h), nil
}

// WriteBlob stores data as a blob.
func (st *Store) WriteBlob(data []byte) (Hash, error) {
	return st.put(plumbing.BlobObject, data)
}

// object reads an object. When it is not found, the pack list is read
// again and the lookup retried once: a concurrent repack (git gc, or
// rally's own background pack) may have moved it from a loose file into a
// pack this process did not know about.
func (st *Store) object(t plumbing.ObjectType, h Hash) (plumbing.EncodedObject, error) {
	obj, err := st.s.EncodedObject(t, plumbing.Hash(h))
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		st.s.Reindex()
		obj, err = st.s.EncodedObject(t, plumbing.Hash(h))
	}
	return obj, err
}

// ReadBlob returns a blob's content.
func (st *Store) ReadBlob(h Hash) ([]byte, error) {
	obj, err := st.object(plumbing.BlobObject, h)
	if err != nil {
		return nil, notFound("blob", h, err)
	}
	r, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

func notFound(kind string, h Hash, err error) error {
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return fmt.Errorf("%s %s: %w", kind, h, ErrNotFound)
	}
	return fmt.Errorf("reading %s %s: %w", kind, h, err)
}

// HasObject reports whether the store holds the object.
func (st *Store) HasObject(h Hash) bool {
	return st.s.HasEncodedObject(plumbing.Hash(h)) == nil
}

// WriteTree stores a tree. Entries may come in any order; they are sorted
// the way git sorts them.
func (st *Store) WriteTree(entries []Entry) (Hash, error) {
	t := object.Tree{Entries: make([]object.TreeEntry, len(entries))}
	for i, e := range entries {
		mode := filemode.Regular
		if e.Dir {
			mode = filemode.Dir
		}
		t.Entries[i] = object.TreeEntry{Name: e.Name, Mode: mode, Hash: plumbing.Hash(e.Hash)}
	}
	sort.Sort(object.TreeEntrySorter(t.Entries))
	obj := st.s.NewEncodedObject()
	if err := t.Encode(obj); err != nil {
		return ZeroHash, fmt.Errorf("encoding tree: %w", err)
	}
	h, err := st.s.SetEncodedObject(obj)
	if err != nil {
		return ZeroHash, fmt.Errorf("writing tree: %w", err)
	}
	return Hash(h), nil
}

// ReadTree returns a tree's entries in git order.
func (st *Store) ReadTree(h Hash) ([]Entry, error) {
	obj, err := st.object(plumbing.TreeObject, h)
	if err != nil {
		return nil, notFound("tree", h, err)
	}
	var t object.Tree
	if err := t.Decode(obj); err != nil {
		return nil, fmt.Errorf("decoding tree %s: %w", h, err)
	}
	out := make([]Entry, len(t.Entries))
	for i, e := range t.Entries {
		out[i] = Entry{Name: e.Name, Dir: e.Mode == filemode.Dir, Hash: Hash(e.Hash)}
	}
	return out, nil
}

// Signature names the author and committer of ledger commits.
var Signature = object.Signature{Name: "git-rally", Email: "rally@localhost"}

// WriteCommit stores a commit.
func (st *Store) WriteCommit(c Commit) (Hash, error) {
	sig := Signature
	sig.When = c.When
	gc := object.Commit{
		Author:    sig,
		Committer: sig,
		Message:   c.Message,
		TreeHash:  plumbing.Hash(c.Tree),
	}
	for _, p := range c.Parents {
		gc.ParentHashes = append(gc.ParentHashes, plumbing.Hash(p))
	}
	obj := st.s.NewEncodedObject()
	if err := gc.Encode(obj); err != nil {
		return ZeroHash, fmt.Errorf("encoding commit: %w", err)
	}
	h, err := st.s.SetEncodedObject(obj)
	if err != nil {
		return ZeroHash, fmt.Errorf("writing commit: %w", err)
	}
	return Hash(h), nil
}

// ReadCommit returns a commit's tree, parents and message.
func (st *Store) ReadCommit(h Hash) (Commit, error) {
	obj, err := st.object(plumbing.CommitObject, h)
	if err != nil {
		return Commit{}, notFound("commit", h, err)
	}
	var gc object.Commit
	if err := gc.Decode(obj); err != nil {
		return Commit{}, fmt.Errorf("decoding commit %s: %w", h, err)
	}
	c := Commit{Tree: Hash(gc.TreeHash), Message: gc.Message, When: gc.Committer.When}
	for _, p := range gc.ParentHashes {
		c.Parents = append(c.Parents, Hash(p))
	}
	return c, nil
}

// bytesTrim is used by ref parsing.
func bytesTrim(b []byte) string { return string(bytes.TrimSpace(b)) }
