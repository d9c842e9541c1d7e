package refs

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	return filepath.Join(dir, ".git")
}

func gitOut(t *testing.T, gitDir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"--git-dir", gitDir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// The store writes objects git reads back byte for byte, and reads what
// git writes.
func TestStoreConformance(t *testing.T) {
	gd := gitRepo(t)
	st, err := Open(gd)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	blob, err := st.WriteBlob([]byte("hello\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := gitOut(t, gd, "cat-file", "-p", blob.String()); got != "hello" {
		t.Fatalf("git reads the blob as %q", got)
	}
	sub, err := st.WriteTree([]Entry{{Name: "b.json", Hash: blob}})
	if err != nil {
		t.Fatal(err)
	}
	// Entries come unsorted; git's order puts "a" before "a.txt" before "a/".
	root, err := st.WriteTree([]Entry{{Name: "z", Hash: blob}, {Name: "a", Dir: true, Hash: sub}, {Name: "a.txt", Hash: blob}})
	if err != nil {
		t.Fatal(err)
	}
	ls := gitOut(t, gd, "ls-tree", "-r", "--name-only", root.String())
	if ls != "a.txt\na/b.json\nz" {
		t.Fatalf("git ls-tree:\n%s", ls)
	}
	when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c1, err := st.WriteCommit(Commit{Tree: root, Message: "one\n", When: when})
	if err != nil {
		t.Fatal(err)
	}
	c2, err := st.WriteCommit(Commit{Tree: sub, Parents: []Hash{c1}, Message: "two\n", When: when})
	if err != nil {
		t.Fatal(err)
	}
	if got := gitOut(t, gd, "log", "--format=%s %ct", c2.String()); got != "two 1767323045\none 1767323045" {
		t.Fatalf("git log: %q", got)
	}
	gitOut(t, gd, "fsck", "--strict", "--no-dangling", c2.String())
	c, err := st.ReadCommit(c2)
	if err != nil || c.Tree != sub || len(c.Parents) != 1 || c.Parents[0] != c1 || c.Message != "two\n" {
		t.Fatalf("ReadCommit: %+v %v", c, err)
	}
	es, err := st.ReadTree(root)
	if err != nil || len(es) != 3 || !es[1].Dir || es[1].Name != "a" {
		t.Fatalf("ReadTree: %+v %v", es, err)
	}
	// An object git wrote reads back.
	cmd := exec.Command("git", "--git-dir", gd, "hash-object", "-w", "--stdin")
	cmd.Stdin = strings.NewReader("from git\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	gh, _ := ParseHash(string(out))
	if b, err := st.ReadBlob(gh); err != nil || string(b) != "from git\n" {
		t.Fatalf("ReadBlob of git's object: %q %v", b, err)
	}
	if _, err := st.ReadBlob(Hash{1}); err == nil {
		t.Fatal("reading a missing object succeeded")
	}
}

func TestRefLockProtocol(t *testing.T) {
	gd := gitRepo(t)
	st, _ := Open(gd)
	defer st.Close()
	blob, _ := st.WriteBlob([]byte("x"))
	tree, _ := st.WriteTree([]Entry{{Name: "x", Hash: blob}})
	c1, _ := st.WriteCommit(Commit{Tree: tree, Message: "1\n", When: time.Unix(0, 0)})
	c2, _ := st.WriteCommit(Commit{Tree: tree, Parents: []Hash{c1}, Message: "2\n", When: time.Unix(0, 0)})

	l, err := st.LockRef("refs/rally/ledger")
	if err != nil {
		t.Fatal(err)
	}
	if !l.Old.IsZero() {
		t.Fatalf("absent ref read as %s", l.Old)
	}
	if _, err := os.Stat(filepath.Join(gd, "refs/rally/ledger.lock")); err != nil {
		t.Fatalf("no git lock file while held: %v", err)
	}
	// git itself cannot move the ref while rally holds it.
	cmd := exec.Command("git", "--git-dir", gd, "update-ref", "refs/rally/ledger", c1.String())
	if cmd.Run() == nil {
		t.Fatalf("git update-ref succeeded while the lock was held")
	}
	if err := l.Commit(c1); err != nil {
		t.Fatal(err)
	}
	l.Unlock()
	if got := gitOut(t, gd, "rev-parse", "refs/rally/ledger"); got != c1.String() {
		t.Fatalf("ref is %s", got)
	}
	// Packed refs are read under the lock, and a loose ref shadows them.
	gitOut(t, gd, "pack-refs", "--all")
	if _, err := os.Stat(filepath.Join(gd, "refs/rally/ledger")); err == nil {
		t.Fatalf("pack-refs left the loose ref")
	}
	l, err = st.LockRef("refs/rally/ledger")
	if err != nil {
		t.Fatal(err)
	}
	if l.Old != c1 {
		t.Fatalf("packed ref read as %s, want %s", l.Old, c1)
	}
	if err := l.Commit(c2); err != nil {
		t.Fatal(err)
	}
	l.Unlock()
	if got := gitOut(t, gd, "rev-parse", "refs/rally/ledger"); got != c2.String() {
		t.Fatalf("after packed update ref is %s", got)
	}
	// An uncommitted lock leaves nothing behind.
	l, _ = st.LockRef("refs/rally/ledger")
	l.Unlock()
	if _, err := os.Stat(filepath.Join(gd, "refs/rally/ledger.lock")); err == nil {
		t.Fatalf("Unlock left the lock file")
	}
	if h, _ := st.ReadRef("refs/rally/ledger"); h != c2 {
		t.Fatalf("ref moved by an uncommitted lock")
	}
}

// A lock whose note names a dead rally process is removed; the same lock
// without the note (git's, or unprovable) is waited for and reported,
// however old it is.
func TestStaleLockRecovery(t *testing.T) {
	gd := gitRepo(t)
	st, _ := Open(gd)
	defer st.Close()
	lock := filepath.Join(gd, "refs/rally/ledger.lock")
	os.MkdirAll(filepath.Dir(lock), 0o777)
	os.MkdirAll(filepath.Join(gd, "rally", "reflocks"), 0o777)
	os.WriteFile(lock, nil, 0o444)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(lock, old, old)
	t.Setenv("RALLY_LOCK_TIMEOUT", "50ms")

	_, err := st.LockRef("refs/rally/ledger")
	var le *LockedError
	if !errors.As(err, &le) || le.Path != lock {
		t.Fatalf("an hour-old lock without rally's note: %v, want a LockedError naming %s", err, lock)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("a lock rally cannot prove stale was removed")
	}

	// A note for that very inode, written by a process that has exited.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	pid := dead.Process.Pid
	fi, _ := os.Stat(lock)
	dev, ino := fileID(fi)
	note := filepath.Join(gd, "rally", "reflocks", fmt.Sprintf("%d-%d", dev, ino))
	boot := processID(os.Getpid()).boot
	os.WriteFile(note, []byte(fmt.Sprintf("%d 12345 %s\n", pid, boot)), 0o666)
	l, err := st.LockRef("refs/rally/ledger")
	if err != nil {
		t.Fatalf("a dead rally process's lock not recovered: %v", err)
	}
	if !l.RemovedStale {
		t.Fatalf("stale lock removal not reported")
	}
	l.Unlock()

	// A note naming a live process (this one) is not stale.
	if _, err := os.Stat(note); err == nil {
		t.Fatalf("the stale lock's note was left behind")
	}
	os.WriteFile(lock, nil, 0o444)
	fi, _ = os.Stat(lock)
	dev, ino = fileID(fi)
	note = filepath.Join(gd, "rally", "reflocks", fmt.Sprintf("%d-%d", dev, ino))
	self := processID(os.Getpid())
	os.WriteFile(note, []byte(fmt.Sprintf("%d %s %s\n", os.Getpid(), self.start, self.boot)), 0o666)
	if _, err := st.LockRef("refs/rally/ledger"); !errors.As(err, &le) {
		t.Fatalf("a live process's lock: %v, want a LockedError", err)
	}
	if _, err := os.Stat(note); err != nil {
		t.Fatalf("a failed lock attempt removed the holder's note")
	}
	ents, _ := os.ReadDir(filepath.Join(gd, "rally", "reflocks"))
	for _, e := range ents {
		if p := filepath.Join(gd, "rally", "reflocks", e.Name()); p != note && e.Name() != ownerNote {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// The owner note (this version's proof) works as the per-inode notes of
// earlier versions do: a lock it names whose process is gone is removed;
// one whose process lives, or a lock it does not name, is reported.
func TestStaleLockOwnerNote(t *testing.T) {
	gd := gitRepo(t)
	st, _ := Open(gd)
	defer st.Close()
	t.Setenv("RALLY_LOCK_TIMEOUT", "50ms")
	lock := filepath.Join(gd, "refs/rally/ledger.lock")
	dir := filepath.Join(gd, "rally", "reflocks")
	os.MkdirAll(filepath.Dir(lock), 0o777)
	os.MkdirAll(dir, 0o777)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	self := processID(os.Getpid())
	place := func(pid int, start string, named bool) {
		os.Remove(lock)
		os.WriteFile(lock, nil, 0o444)
		fi, _ := os.Stat(lock)
		id := inodeID(fi)
		if !named {
			id = "1-1"
		}
		if err := writeOwnerNote(dir, fmt.Sprintf("%s %d %s %s", id, pid, start, self.boot)); err != nil {
			t.Fatal(err)
		}
	}
	var le *LockedError
	place(os.Getpid(), self.start, true)
	if _, err := st.LockRef("refs/rally/ledger"); !errors.As(err, &le) {
		t.Fatalf("a live process's lock: %v, want a LockedError", err)
	}
	place(dead.Process.Pid, "12345", false)
	if _, err := st.LockRef("refs/rally/ledger"); !errors.As(err, &le) {
		t.Fatalf("a lock the note does not name: %v, want a LockedError", err)
	}
	place(dead.Process.Pid, "12345", true)
	l, err := st.LockRef("refs/rally/ledger")
	if err != nil || !l.RemovedStale {
		t.Fatalf("a dead rally process's lock not recovered: %v", err)
	}
	if err := l.Commit(Hash{1}); err != nil {
		t.Fatal(err)
	}
	l.Unlock()
	if _, _, _, _, ok := readOwnerNote(dir); ok {
		t.Fatal("the owner note still names a lock after the commit")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != ownerNote {
		t.Fatalf("reflocks holds %v, want only the owner note", ents)
	}
}

func TestReadBlobsBatch(t *testing.T) {
	gd := gitRepo(t)
	st, _ := Open(gd)
	defer st.Close()
	var hs []Hash
	for i := 0; i < BatchThreshold+3; i++ {
		h, _ := st.WriteBlob([]byte(strings.Repeat("x", i%7) + "\n" + string(rune('a'+i%26))))
		hs = append(hs, h)
	}
	got, err := st.ReadBlobs(hs)
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range hs {
		want, _ := st.ReadBlob(h)
		if string(got[i]) != string(want) {
			t.Fatalf("blob %d: %q, want %q", i, got[i], want)
		}
	}
	if _, err := st.ReadBlobs(append(hs, Hash{9})); err == nil {
		t.Fatalf("a missing blob read without error")
	}
}

func TestStreamBlobs(t *testing.T) {
	gd := gitRepo(t)
	st, _ := Open(gd)
	defer st.Close()
	var hs []Hash
	for i := 0; i < BatchThreshold+3; i++ {
		h, _ := st.WriteBlob([]byte(strings.Repeat("y", i%300) + "\n" + string(rune('a'+i%26))))
		hs = append(hs, h)
	}
	seen := 0
	err := st.StreamBlobs(hs, func(i int, data []byte) {
		want, _ := st.ReadBlob(hs[i])
		if string(data) != string(want) {
			t.Fatalf("blob %d: %q, want %q", i, data, want)
		}
		seen++
	})
	if err != nil || seen != len(hs) {
		t.Fatalf("streamed %d of %d: %v", seen, len(hs), err)
	}
	if err := st.StreamBlobs(append(hs, Hash{9}), func(int, []byte) {}); err == nil {
		t.Fatalf("a missing blob streamed without error")
	}
}

// A gc that deletes an object right after Ensure's pass saw it, and then
// ends, must not leave it deleted: Ensure asks whether a gc runs before a
// pass, so the pass after that gc ended writes the object back.
func TestEnsureAfterGCEnds(t *testing.T) {
	gd := gitRepo(t)
	st, err := Open(gd)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h, err := st.WriteBlob([]byte("acknowledged\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, path := st.loosePath(plumbing.Hash(h))
	probes := 0
	st.gcProbe = func() bool {
		probes++
		if probes == 1 {
			return true // a gc with --prune=now runs
		}
		// Between the first pass and this probe the gc pruned the
		// object and exited.
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		return false
	}
	if err := st.Ensure(); err != nil {
		t.Fatal(err)
	}
	if probes != 2 {
		t.Fatalf("gc probed %d times, want 2", probes)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the object a gc pruned before it ended is gone: %v", err)
	}
}
