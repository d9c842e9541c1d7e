package refs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// ErrRefChanged is returned when a ref does not hold the value the caller
// expected.
var ErrRefChanged = errors.New("ref changed")

// LockTimeout is how long a writer waits for a <ref>.lock that it cannot
// prove a dead rally process left (git holds it, or a process that is
// still running): a few seconds, as git's core.filesRefLockTimeout. The
// environment variable RALLY_LOCK_TIMEOUT (a Go duration) overrides it.
const LockTimeout = 5 * time.Second

func lockTimeout() time.Duration {
	if v := os.Getenv("RALLY_LOCK_TIMEOUT"); v != "" {
		if d, err := time.ParseDuration(v); err == nil && d >= 0 {
			return d
		}
	}
	return LockTimeout
}

// LockedError reports a <ref>.lock that is held by someone else, or that
// rally cannot prove was left by a dead rally process.
type LockedError struct {
	Ref, Path string
	Waited    time.Duration
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("cannot lock %s: %s exists (waited %s); another git process is updating it, or one was killed while it did",
		e.Ref, e.Path, e.Waited.Round(time.Millisecond))
}

// Hint says what to do about it.
func (e *LockedError) Hint() string {
	return "remove " + e.Path + " only when no git process is running: rm " + e.Path
}

// ReadRef returns the value of a ref, loose or packed, or ZeroHash when it
// does not exist.
func (st *Store) ReadRef(name string) (Hash, error) {
	return readRef(st.CommonDir, name)
}

func readRef(commonDir, name string) (Hash, error) {
	b, err := os.ReadFile(filepath.Join(commonDir, filepath.FromSlash(name)))
	if err == nil {
		v := bytesTrim(b)
		if strings.HasPrefix(v, "ref:") {
			return ZeroHash, fmt.Errorf("ref %s is symbolic", name)
		}
		h, err := ParseHash(v)
		if err != nil {
			return ZeroHash, fmt.Errorf("reading ref %s: %w", name, err)
		}
		return h, nil
	}
	if !errors.Is(err, fs.ErrNotExist) && !isDirErr(err) {
		return ZeroHash, fmt.Errorf("reading ref %s: %w", name, err)
	}
	return readPackedRef(commonDir, name)
}

func isDirErr(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && errors.Is(pe.Err, syscall.EISDIR)
}

func readPackedRef(commonDir, name string) (Hash, error) {
	var id string
	found := false
	err := ScanPackedRefs(commonDir, func(n, v string) bool {
		if n == name {
			id, found = v, true
		}
		return !found
	})
	if found {
		return ParseHash(id)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return ZeroHash, nil
	}
	return ZeroHash, err
}

// RefLock is a held update of one ref: rally's private queue lock and git's
// <ref>.lock. Old is the ref's value read under the lock.
type RefLock struct {
	Old       Hash
	name      string
	path      string
	commonDir string
	queue     *os.File
	lock      *os.File
	note      *os.File // the owner note, open from prepare until it is cleared
	committed bool
	sync      bool // fsync the lock file before the rename (Store.Fsync)
	// RemovedStale reports that a <ref>.lock a dead rally process left was
	// removed on the way in.
	RemovedStale bool
}

// LockRef takes the queue lock (a blocking flock on a file private to rally,
// so rally's writers wait in turn) and then git's own <ref>.lock, created
// exclusively, so plain git never races with rally. It reads the ref's
// current value under the lock.
//
// Rally proves which lock files are its own: under the queue lock it
// creates the lock's inode first under a private name, writes the owner
// note (rally/reflocks/owner: the inode's identity, its pid, process start
// time and boot) and only then links the inode to <ref>.lock (link, like
// O_EXCL, fails when the name exists). The note is cleared before the lock
// file goes away, so a note naming the current <ref>.lock's inode
// describes that very file. A lock whose note names a process that is
// gone is stale and removed; every other lock (git's, or one that cannot
// be proved) is waited for and then reported with a LockedError. Age
// proves nothing: a live `git update-ref --stdin` transaction may hold a
// lock for minutes.
//
// The note is one file rewritten in place (only the holder of the queue
// lock writes it), not a file per lock: every inode created and deleted
// per append costs, and on ext4 a recently deleted inode makes the next
// creations in its group slower for minutes.
func (st *Store) LockRef(name string) (*RefLock, error) {
	// Who this process is (two /proc reads) is found before the queue:
	// the other writers wait only for what must be done in turn.
	self := processID(os.Getpid())
	q, err := QueueLock(st.CommonDir, "append")
	if err != nil {
		return nil, err
	}
	l := &RefLock{name: name, path: filepath.Join(st.CommonDir, filepath.FromSlash(name)), commonDir: st.CommonDir, queue: q,
		sync: st.Fsync.Refs}
	if err := os.MkdirAll(filepath.Dir(l.path), 0o777); err != nil {
		l.release()
		return nil, fmt.Errorf("locking %s: %w", name, err)
	}
	// A lock the previous rally writer left when it was killed is proved
	// by the owner note it wrote, before this writer's prepare rewrites it.
	if note, ok := staleOwnLock(l.rallyDir(), l.path+".lock"); ok && os.Remove(l.path+".lock") == nil {
		if note != "" {
			os.Remove(note)
		}
		l.RemovedStale = true
	}
	f, err := l.prepare(self)
	if err != nil {
		l.release()
		return nil, fmt.Errorf("locking %s: %w", name, err)
	}
	start := time.Now()
	wait := lockTimeout()
	backoff := time.Millisecond
	for {
		err := os.Link(f.Name(), l.path+".lock")
		if err == nil {
			os.Remove(f.Name())
			l.lock = f
			l.sweep()
			break
		}
		if !errors.Is(err, fs.ErrExist) {
			l.drop(f)
			return nil, fmt.Errorf("locking %s: %w", name, err)
		}
		// We hold the queue: no other rally writer is inside. A lock
		// rally can prove a dead rally process left (an earlier version's
		// per-inode note) is removed.
		if note, ok := staleOwnLock(l.rallyDir(), l.path+".lock"); ok && os.Remove(l.path+".lock") == nil {
			if note != "" {
				os.Remove(note)
			}
			l.RemovedStale = true
			continue
		}
		if time.Since(start) >= wait {
			l.drop(f)
			return nil, &LockedError{Ref: name, Path: l.path + ".lock", Waited: time.Since(start)}
		}
		time.Sleep(backoff)
		if backoff < 8*time.Millisecond { // poll often: git holds its locks briefly
			backoff *= 2
		}
	}
	old, err := readRef(st.CommonDir, name)
	if err != nil {
		l.Unlock()
		return nil, err
	}
	l.Old = old
	return l, nil
}

// lockMode is the mode of the lock files rally creates (git creates its
// own 0666 less the umask): one more sign that a lock is rally's.
const lockMode = 0o444

// prepare creates the lock's inode under a private name and writes the
// owner note that names it.
func (l *RefLock) prepare(self procID) (*os.File, error) {
	f, err := createTemp(l.rallyDir(), "tmp-")
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	note, err := os.OpenFile(filepath.Join(l.rallyDir(), ownerNote), os.O_RDWR|os.O_CREATE, 0o666)
	if err == nil {
		if err = writeNoteAt(note, fmt.Sprintf("%s %d %s %s", inodeID(fi), os.Getpid(), self.start, self.boot)); err != nil {
			note.Close()
		}
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	// Kept open: the note is cleared through the same descriptor once
	// the lock is gone (one open per append, not two).
	l.note = note
	return f, nil
}

func (l *RefLock) rallyDir() string { return filepath.Join(l.commonDir, "rally", "reflocks") }

// ownerNote is the note's file name in rally/reflocks; ownerNoteSize its
// fixed length, so that rewriting it never leaves a longer note's tail.
const (
	ownerNote     = "owner"
	ownerNoteSize = 160
)

// writeOwnerNote rewrites the owner note in place ("" clears it).
func writeOwnerNote(rallyDir, note string) error {
	f, err := os.OpenFile(filepath.Join(rallyDir, ownerNote), os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return err
	}
	err = writeNoteAt(f, note)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeNoteAt writes note over the note file f, padded to its fixed size.
func writeNoteAt(f *os.File, note string) error {
	b := []byte(note + "\n")
	if len(b) > ownerNoteSize {
		b = b[:ownerNoteSize]
	}
	b = append(b, strings.Repeat(" ", ownerNoteSize-len(b))...)
	_, err := f.WriteAt(b, 0)
	return err
}

// clearNote clears the owner note, which names this lock's inode: only
// the holder of the queue lock writes it.
func (l *RefLock) clearNote() {
	if l.note == nil {
		writeOwnerNote(l.rallyDir(), "")
		return
	}
	writeNoteAt(l.note, "")
	l.note.Close()
	l.note = nil
}

// readOwnerNote returns the owner note's fields.
func readOwnerNote(rallyDir string) (inode string, pid int, start, boot string, ok bool) {
	b, err := os.ReadFile(filepath.Join(rallyDir, ownerNote))
	if err != nil {
		return "", 0, "", "", false
	}
	n, _ := fmt.Sscanf(string(b), "%s %d %s %s", &inode, &pid, &start, &boot)
	return inode, pid, start, boot, n == 4
}

// sweep removes what writers killed on the way in left in the note
// directory (their private inodes; per-lock notes of earlier versions):
// under the queue lock and holding <ref>.lock, everything but the owner
// note is garbage.
func (l *RefLock) sweep() {
	ents, err := os.ReadDir(l.rallyDir())
	if err != nil || len(ents) <= 1 {
		return
	}
	for _, e := range ents {
		if e.Name() != ownerNote {
			os.Remove(filepath.Join(l.rallyDir(), e.Name()))
		}
	}
}

func inodeID(fi fs.FileInfo) string {
	dev, ino := fileID(fi)
	return fmt.Sprintf("%d-%d", dev, ino)
}

// drop clears the note and removes the private inode (the lock was never
// taken).
func (l *RefLock) drop(f *os.File) {
	l.clearNote()
	f.Close()
	os.Remove(f.Name())
	l.release()
}

// staleOwnLock reports whether the lock file at p is one rally created
// (the owner note, or an earlier version's per-inode note, names its
// inode) and the process that created it is gone. It returns the path of
// a per-inode note to remove with the lock ("" for the owner note).
func staleOwnLock(rallyDir, p string) (string, bool) {
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != lockMode {
		return "", false
	}
	id := inodeID(fi)
	if inode, pid, start, boot, ok := readOwnerNote(rallyDir); ok && inode == id {
		if processAlive(pid, start, boot) {
			return "", false
		}
		return "", writeOwnerNote(rallyDir, "") == nil
	}
	legacy := filepath.Join(rallyDir, id)
	b, err := os.ReadFile(legacy)
	if err != nil {
		return "", false
	}
	var pid int
	var start, boot string
	if n, _ := fmt.Sscanf(string(b), "%d %s %s", &pid, &start, &boot); n != 3 {
		return "", false
	}
	return legacy, !processAlive(pid, start, boot)
}

// Commit publishes the new value: write it into the lock file, fsync it
// when git's core.fsync asks for refs (Store.Fsync), and rename the lock
// file over the ref.
func (l *RefLock) Commit(h Hash) error {
	if l.lock == nil {
		return fmt.Errorf("updating %s: lock not held", l.name)
	}
	_, err := l.lock.WriteString(h.String() + "\n")
	if err == nil && l.sync {
		err = l.lock.Sync()
	}
	if cerr := l.lock.Close(); err == nil {
		err = cerr
	}
	l.lock = nil
	if err != nil {
		l.clearNote()
		os.Remove(l.path + ".lock")
		return fmt.Errorf("updating %s: %w", l.name, err)
	}
	if err := RenameOver(l.path+".lock", l.path); err != nil {
		// The lock is not ours any more (someone removed it): leave
		// whatever is there now alone.
		l.clearNote()
		return fmt.Errorf("updating %s: %w", l.name, err)
	}
	// A writer killed right here leaves a note naming the ref file's
	// inode; the next rally writer overwrites it before it links a lock,
	// and until then the mode check in staleOwnLock keeps it from matching
	// a lock git creates on a reused inode.
	l.clearNote()
	l.committed = true
	return nil
}

// Unlock drops the lock file if the update was not committed and releases
// the queue. It is safe to call more than once.
func (l *RefLock) Unlock() {
	if l.lock != nil {
		l.lock.Close()
		l.lock = nil
		l.clearNote()
		os.Remove(l.path + ".lock")
	}
	l.release()
}

func (l *RefLock) release() {
	if l.note != nil {
		l.note.Close()
		l.note = nil
	}
	if l.queue != nil {
		syscall.Flock(int(l.queue.Fd()), syscall.LOCK_UN)
		l.queue.Close()
		l.queue = nil
	}
}

// QueueLock takes a blocking exclusive flock on <common>/rally/<name>.lock.
// Close the file to release it.
func QueueLock(commonDir, name string) (*os.File, error) {
	dir := filepath.Join(commonDir, "rally")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	f, err := os.OpenFile(filepath.Join(dir, name+".lock"), os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, fmt.Errorf("opening queue lock: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("taking queue lock: %w", err)
	}
	return f, nil
}

// UnlockQueue releases a lock from QueueLock.
func UnlockQueue(f *os.File) {
	if f != nil {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}
}

// RefLockFile returns the path of name's lock file if one exists.
func (st *Store) RefLockFile(name string) (string, time.Time, bool) {
	p := filepath.Join(st.CommonDir, filepath.FromSlash(name)) + ".lock"
	fi, err := os.Stat(p)
	if err != nil {
		return "", time.Time{}, false
	}
	return p, fi.ModTime(), true
}
