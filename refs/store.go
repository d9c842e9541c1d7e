package refs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
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
	var h Hash
	if len(s) != 40 {
		return ZeroHash, fmt.Errorf("bad object id %q", s)
	}
	// By hand: a cached tree's entries are parsed on every append, and
	// hex.DecodeString plus a lowercased copy to compare cost allocations each.
	for i := 0; i < 20; i++ {
		hi, ok1 := unhex(s[2*i])
		lo, ok2 := unhex(s[2*i+1])
		if !ok1 || !ok2 {
			return ZeroHash, fmt.Errorf("bad object id %q", s)
		}
		h[i] = hi<<4 | lo
	}
	return h, nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
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
	// Signer, when set, signs every commit the store writes (sign.go).
	Signer Signer
	// Fsync is what the store fsyncs, as git's core.fsync (FsyncOf);
	// the zero value is git's default: no loose object, no ref.
	Fsync Fsync
	// Windows, when set, replaces PackWindows for the cat-files the
	// store starts (ObjectReader, BlobStream, Exists): doctor reads a
	// whole ledger through SmallPackWindows.
	Windows []string
	// ReadBudget, when set, is the number of objects an ObjectReader
	// reads through one cat-file before it starts the next: a read is a
	// lookup at random in the pack's index, which git maps whole, and
	// the pages a lookup touches count in its RSS (a few hundred of them
	// touch nearly all of it: 30 MB at a million objects). doctor sets it.
	ReadBudget int
	db         *objectDB
	// journal lists every object put since the last Ensure, with its
	// bytes, so the objects of an append can be written again when a
	// concurrent prune removed them before the ref pointed at them.
	journal []journaled
	// gcProbe replaces gcRunning in tests.
	gcProbe func() bool
}

type journaled struct {
	t    plumbing.ObjectType
	h    plumbing.Hash
	data []byte
}

// Open opens the object store of the repository whose common dir is given.
// Objects are read from the common dir's objects directory (objects.go):
// go-git's PlainOpen refuses repositories with extensions it does not know
// (sparse checkouts set extensions.worktreeConfig) and, opened from a
// linked worktree without the common dir, writes objects into the
// worktree's private dir.
func Open(commonDir string) (*Store, error) {
	Opens.Store.Add(1)
	if fi, err := os.Stat(commonDir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("opening object store: %s is not a git directory", commonDir)
	}
	db := newObjectDB(filepath.Join(commonDir, "objects"), cache.NewObjectLRU(8*cache.MiByte), 0)
	return &Store{CommonDir: commonDir, db: db}, nil
}

// Close releases pack file descriptors.
func (st *Store) Close() error { return st.db.close() }

// put writes one loose object the way git itself does: a temporary file
// in the object's own fan-out directory, created read-only, renamed into
// place. The zlib stream is stored, not compressed (git's
// core.looseCompression=0, which every git reads): a loose object lives
// until the background pack, which compresses it; a segment tree is
// mostly object ids, which do not compress; and best-speed deflate of a
// 12 KB tree costs 50-100 times a stored copy (its 128 KB match table is
// cleared for every object). go-git's own writer stages every object in
// objects/pack, renames it across directories, chmods it afterwards and
// compresses at the default level.
//
// An append's objects are new (each holds the new fact, or a tree or a
// commit above it), so put writes without asking first whether the
// object is already there: an object that is renames over its identical
// copy. Ensure, whose objects are usually there, asks first.
func (st *Store) put(t plumbing.ObjectType, data []byte) (Hash, error) {
	h := plumbing.ComputeHash(t, data)
	st.journal = append(st.journal, journaled{t, h, data})
	return Hash(h), st.writeLoose(t, h, data, false)
}

func (st *Store) loosePath(h plumbing.Hash) (dir, final string) {
	hex := h.String()
	dir = filepath.Join(st.CommonDir, "objects", hex[:2])
	return dir, filepath.Join(dir, hex[2:])
}

func (st *Store) writeLoose(t plumbing.ObjectType, h plumbing.Hash, data []byte, check bool) error {
	dir, final := st.loosePath(h)
	for try := 0; ; try++ {
		if !check {
			check = true // a retry asks: a prune may have raced a writer of it
		} else if _, err := os.Lstat(final); err == nil {
			return nil // content-addressed: already there
		}
		err := writeOnce(dir, final, t, data, st.Fsync.Objects)
		// `git prune` (git gc) removes temporary object files, and
		// `git prune-packed` empty fan-out directories, under a writer:
		// start again.
		if err == nil || !errors.Is(err, fs.ErrNotExist) || try >= 100 {
			return err
		}
	}
}

func writeOnce(dir, final string, t plumbing.ObjectType, data []byte, sync bool) error {
	f, err := createTemp(dir, "tmp_obj_")
	if err != nil {
		return fmt.Errorf("writing %s object: %w", t, err)
	}
	werr := encodeLoose(f, t, data)
	if werr == nil && sync {
		werr = f.Sync()
	}
	if err := f.Close(); werr == nil {
		werr = err
	}
	if werr == nil {
		werr = RenameOver(f.Name(), final)
	}
	if werr != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing %s object: %w", t, werr)
	}
	return nil
}

// gcWait bounds how long Ensure keeps watching the objects of an append
// while a `git gc` runs beside it.
const gcWait = 30 * time.Second

// Ensure makes sure every object put since the last call is in the
// repository, writing again any that is gone, and forgets them. Call it
// after the ref that makes them reachable has moved: a `git prune` (or
// `git gc --prune=now`) that read the refs before the move may delete
// them until it ends. While git gc runs (its gc.pid lock exists), the
// objects are checked again until it is done.
//
// Whether a gc runs is asked before each pass over the objects, not after:
// a gc that deletes an object just after a pass saw it and then ends would
// otherwise look finished to the check that follows, and the object stay
// lost. Seen not running before a pass, no gc can delete anything the
// pass finds: a gc that starts later reads the moved ref.
func (st *Store) Ensure() error {
	defer func() { st.journal = st.journal[:0] }()
	deadline := time.Now().Add(gcWait)
	running := st.gcRunning
	if st.gcProbe != nil {
		running = st.gcProbe
	}
	for {
		gc := running()
		for _, j := range st.journal {
			if err := st.writeLoose(j.t, j.h, j.data, true); err != nil {
				return err
			}
		}
		if !gc || time.Now().After(deadline) {
			return nil
		}
		// Short: until an object is written back, a reader (another
		// gc, a rally read) finds the ref pointing at nothing.
		time.Sleep(time.Millisecond)
	}
}

// gcRunning reports whether a git gc that may prune what was just written
// holds its lock (git treats a gc.pid older than 12 hours as stale). Only
// a gc told to prune everything unreachable now (--prune=now, --prune=all)
// can remove an append's objects: the default expiry is two weeks, so an
// ordinary (or automatic) gc is not waited for. A gc whose command line
// cannot be read (another machine's, by the hostname in gc.pid) is.
func (st *Store) gcRunning() bool {
	p := filepath.Join(st.CommonDir, "gc.pid")
	fi, err := os.Stat(p)
	if err != nil || time.Since(fi.ModTime()) >= 12*time.Hour {
		return false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return true
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return true
	}
	cmd, err := os.ReadFile("/proc/" + f[0] + "/cmdline")
	if err != nil {
		return !errors.Is(err, fs.ErrNotExist) // a gone process prunes nothing more
	}
	for _, arg := range strings.Split(string(cmd), "\x00") {
		if arg == "--prune=now" || arg == "--prune=all" || strings.HasPrefix(arg, "gc.pruneExpire=now") {
			return true
		}
	}
	return false
}

// createTemp creates a new read-only file in dir (made when missing), as
// git creates its temporary object files. A concurrent `git prune-packed`
// (git repack -d, git gc) removes fan-out directories that it emptied,
// so the directory may vanish between its creation and the file's: make
// it again.
func createTemp(dir, prefix string) (*os.File, error) {
	for i := 0; ; i++ {
		name := filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o444)
		switch {
		case err == nil:
			return f, nil
		case os.IsNotExist(err) && i < 100:
			if err := os.MkdirAll(dir, 0o777); err != nil {
				return nil, err
			}
		case os.IsExist(err) && i < 100:
		default:
			return nil, err
		}
	}
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
	obj, err := st.db.object(t, plumbing.Hash(h))
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		st.db.reindex()
		obj, err = st.db.object(t, plumbing.Hash(h))
	}
	return obj, err
}

// ReadBlob returns a blob's content.
func (st *Store) ReadBlob(h Hash) ([]byte, error) {
	return st.readObject(plumbing.BlobObject, "blob", h)
}

// readObject returns the content of an object of type t.
func (st *Store) readObject(t plumbing.ObjectType, kind string, h Hash) ([]byte, error) {
	ObjectsRead.Add(1)
	obj, err := st.object(t, h)
	if err != nil {
		var tl *TooLargeError
		if errors.As(err, &tl) {
			return nil, fmt.Errorf("reading %s %s: %w", kind, h, err)
		}
		return nil, notFound(kind, h, err)
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
	if st.db.has(plumbing.Hash(h)) {
		return true
	}
	st.db.reindex()
	return st.db.has(plumbing.Hash(h))
}

// WriteTree stores a tree. Entries may come in any order; they are sorted
// the way git sorts them.
func (st *Store) WriteTree(entries []Entry) (Hash, error) {
	sorted := append([]Entry(nil), entries...)
	sortEntries(sorted)
	return st.put(plumbing.TreeObject, encodeTree(sorted))
}

// ReadTree returns a tree's entries in git order.
func (st *Store) ReadTree(h Hash) ([]Entry, error) {
	b, err := st.readObject(plumbing.TreeObject, "tree", h)
	if err != nil {
		return nil, err
	}
	out, err := decodeTree(b)
	if err != nil {
		return nil, fmt.Errorf("decoding tree %s: %w", h, err)
	}
	return out, nil
}

// WriteCommit stores a commit, signed when the store has a Signer.
func (st *Store) WriteCommit(c Commit) (Hash, error) {
	sig := ""
	if st.Signer != nil {
		s, err := st.Signer.Sign(encodeCommit(c, ""))
		if err != nil {
			return ZeroHash, err
		}
		sig = string(s)
	}
	return st.put(plumbing.CommitObject, encodeCommit(c, sig))
}

// ReadCommit returns a commit's tree, parents and message.
func (st *Store) ReadCommit(h Hash) (Commit, error) {
	sc, err := st.ReadSignedCommit(h)
	return sc.Commit, err
}

// SignedCommit is a commit with what a verifier needs.
type SignedCommit struct {
	Commit
	// Signature is the gpgsig header ("" when unsigned); Payload the
	// commit's bytes without it, what the signature signs.
	Signature string
	Payload   []byte
}

// ReadSignedCommit reads a commit with its signature.
func (st *Store) ReadSignedCommit(h Hash) (SignedCommit, error) {
	b, err := st.readObject(plumbing.CommitObject, "commit", h)
	if err != nil {
		return SignedCommit{}, err
	}
	c, sig, payload, err := decodeCommit(b)
	if err != nil {
		return SignedCommit{}, fmt.Errorf("decoding commit %s: %w", h, err)
	}
	return SignedCommit{Commit: c, Signature: sig, Payload: payload}, nil
}

// bytesTrim is used by ref parsing.
func bytesTrim(b []byte) string { return string(bytes.TrimSpace(b)) }

// TempObjectAge is how old a temporary object file must be before
// RemoveStaleTemps takes it for one a killed writer left: a writer holds
// its temporary file for milliseconds.
const TempObjectAge = time.Hour

// RemoveStaleTemps removes the tmp_obj_* files under objects/ that are
// older than TempObjectAge (a killed writer, rally's or git's, left them)
// and returns their paths.
func (st *Store) RemoveStaleTemps(now time.Time) []string {
	var out []string
	dirs, _ := filepath.Glob(filepath.Join(st.CommonDir, "objects", "??"))
	for _, d := range dirs {
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if !strings.HasPrefix(e.Name(), "tmp_obj_") {
				continue
			}
			fi, err := e.Info()
			if err != nil || now.Sub(fi.ModTime()) < TempObjectAge {
				continue
			}
			p := filepath.Join(d, e.Name())
			if os.Remove(p) == nil {
				out = append(out, p)
			}
		}
	}
	return out
}
