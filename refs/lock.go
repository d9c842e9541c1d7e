package refs

import (
	"bufio"
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

// StaleLockAge is how old a <ref>.lock must be before the next writer, while
// holding rally's own queue lock, may remove it as left by a killed process.
const StaleLockAge = 5 * time.Second

// lockWait bounds how long a writer waits for a <ref>.lock held by git.
const lockWait = 30 * time.Second

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
	f, err := os.Open(filepath.Join(commonDir, "packed-refs"))
	if errors.Is(err, fs.ErrNotExist) {
		return ZeroHash, nil
	}
	if err != nil {
		return ZeroHash, fmt.Errorf("reading packed-refs: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if len(line) < 42 || line[0] == '#' || line[0] == '^' {
			continue
		}
		if line[41:] == name {
			return ParseHash(line[:40])
		}
	}
	return ZeroHash, sc.Err()
}

// RefLock is a held update of one ref: rally's private queue lock and git's
// <ref>.lock. Old is the ref's value read under the lock.
type RefLock struct {
	Old       Hash
	name      string
	path      string
	queue     *os.File
	lock      *os.File
	committed bool
	// RemovedStale reports that a stale <ref>.lock was removed on the way in.
	RemovedStale bool
}

// LockRef takes the queue lock (a blocking flock on a file private to rally,
// so rally's writers wait in turn) and then git's own <ref>.lock, created
// exclusively, so plain git never races with rally. It reads the ref's
// current value under the lock.
func (st *Store) LockRef(name string) (*RefLock, error) {
	q, err := QueueLock(st.CommonDir, "append")
	if err != nil {
		return nil, err
	}
	l := &RefLock{name: name, path: filepath.Join(st.CommonDir, filepath.FromSlash(name)), queue: q}
	if err := os.MkdirAll(filepath.Dir(l.path), 0o777); err != nil {
		l.release()
		return nil, fmt.Errorf("locking %s: %w", name, err)
	}
	deadline := time.Now().Add(lockWait)
	backoff := time.Millisecond
	for {
		f, err := os.OpenFile(l.path+".lock", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if err == nil {
			l.lock = f
			break
		}
		if !errors.Is(err, fs.ErrExist) {
			l.release()
			return nil, fmt.Errorf("locking %s: %w", name, err)
		}
		// We hold the queue: no other rally writer is inside. A lock file
		// that is old now was left by a killed process.
		if fi, serr := os.Stat(l.path + ".lock"); serr == nil && time.Since(fi.ModTime()) > StaleLockAge {
			if os.Remove(l.path+".lock") == nil {
				l.RemovedStale = true
			}
			continue
		}
		if time.Now().After(deadline) {
			l.release()
			return nil, fmt.Errorf("locking %s: %s.lock exists; another git process is updating it", name, name)
		}
		time.Sleep(backoff)
		if backoff < 50*time.Millisecond {
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

// Commit publishes the new value: write it into the lock file, fsync, and
// rename the lock file over the ref.
func (l *RefLock) Commit(h Hash) error {
	if l.lock == nil {
		return fmt.Errorf("updating %s: lock not held", l.name)
	}
	_, err := l.lock.WriteString(h.String() + "\n")
	if err == nil {
		err = l.lock.Sync()
	}
	if cerr := l.lock.Close(); err == nil {
		err = cerr
	}
	l.lock = nil
	if err == nil {
		err = os.Rename(l.path+".lock", l.path)
	}
	if err != nil {
		os.Remove(l.path + ".lock")
		return fmt.Errorf("updating %s: %w", l.name, err)
	}
	l.committed = true
	return nil
}

// Unlock drops the lock file if the update was not committed and releases
// the queue. It is safe to call more than once.
func (l *RefLock) Unlock() {
	if l.lock != nil {
		l.lock.Close()
		l.lock = nil
		os.Remove(l.path + ".lock")
	}
	l.release()
}

func (l *RefLock) release() {
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

// TryQueueLock is QueueLock without waiting; it returns nil, nil when the
// lock is held elsewhere.
func TryQueueLock(commonDir, name string) (*os.File, error) {
	dir := filepath.Join(commonDir, "rally")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, name+".lock"), os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, nil
	}
	return f, nil
}

// UnlockQueue releases a lock from QueueLock or TryQueueLock.
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
