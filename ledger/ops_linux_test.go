//go:build linux

package ledger

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/git-rally/git-rally/facts"
)

// fileOps counts what the kernel saw happen under a directory tree
// (inotify on every directory in it): files created, renamed into place,
// opened and removed.
type fileOps struct {
	Created, Renamed, Opened, Removed int
	names                             []string
}

func (o fileOps) String() string {
	return fmt.Sprintf("%d created, %d renamed, %d opened, %d removed", o.Created, o.Renamed, o.Opened, o.Removed)
}

// watchOps watches every directory under root (after making the 256
// fan-out directories of objects/, so no object escapes into a new one)
// and returns a function that stops and counts.
func watchOps(t *testing.T, root string) func() fileOps {
	t.Helper()
	for i := 0; i < 256; i++ {
		os.MkdirAll(filepath.Join(root, "objects", fmt.Sprintf("%02x", i)), 0o777)
	}
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		t.Skipf("inotify: %v", err)
	}
	dirs := map[int32]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			wd, err := syscall.InotifyAddWatch(fd, p, syscall.IN_CREATE|syscall.IN_MOVED_TO|syscall.IN_OPEN|syscall.IN_DELETE)
			if err != nil {
				t.Fatalf("watching %s: %v", p, err)
			}
			dirs[int32(wd)] = p
		}
		return nil
	})
	return func() fileOps {
		defer syscall.Close(fd)
		var o fileOps
		buf := make([]byte, 1<<20)
		for {
			n, err := syscall.Read(fd, buf)
			if err != nil || n <= 0 {
				break
			}
			for off := 0; off+syscall.SizeofInotifyEvent <= n; {
				ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
				name := strings.TrimRight(string(buf[off+syscall.SizeofInotifyEvent:off+syscall.SizeofInotifyEvent+int(ev.Len)]), "\x00")
				off += syscall.SizeofInotifyEvent + int(ev.Len)
				if ev.Mask&syscall.IN_ISDIR != 0 {
					continue
				}
				rel, _ := filepath.Rel(root, filepath.Join(dirs[ev.Wd], name))
				switch {
				case ev.Mask&syscall.IN_CREATE != 0:
					o.Created++
					o.names = append(o.names, "create "+rel)
				case ev.Mask&syscall.IN_MOVED_TO != 0:
					o.Renamed++
					o.names = append(o.names, "rename "+rel)
				case ev.Mask&syscall.IN_OPEN != 0:
					o.Opened++
					o.names = append(o.names, "open "+rel)
				case ev.Mask&syscall.IN_DELETE != 0:
					o.Removed++
					o.names = append(o.names, "remove "+rel)
				}
			}
		}
		return o
	}
}

// An append's file operations are a fixed few, whatever the ledger holds:
// a claim in a process of its own (Open, Append, Close) creates its
// objects (a blob, five trees, a commit) and the lock's inode, and opens
// the same files on a ledger of a few facts and on one of a few thousand.
func TestAppendFileOpsFlat(t *testing.T) {
	dir := gitSandbox(t)
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	git(t, dir, "init", "-q", ".")
	common := filepath.Join(dir, ".git")
	now := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	open := func() *Ledger {
		l, err := Open(common, clock)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	grow := func(n int) {
		l := open()
		defer l.Close()
		for done := 0; done < n; done += 100 {
			if _, err := l.Append(func(*facts.State, time.Time) ([]*facts.Fact, error) {
				fs := make([]*facts.Fact, 100)
				for i := range fs {
					fs[i] = &facts.Fact{Kind: facts.KindNote, Tool: "grow:1", Subject: fmt.Sprintf("note %d", done+i)}
				}
				return fs, nil
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	claim := func(i int) fileOps {
		t.Helper()
		now = now.Add(time.Second)
		stop := watchOps(t, common)
		l := open()
		_, err := l.Append(facts.Claim(facts.ClaimRequest{Owner: facts.Owner{Tool: "ops:1"}, Scopes: []string{fmt.Sprintf("file:src/%d.go", i)}}))
		l.Close()
		o := stop()
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	grow(100)
	claim(0) // the first append after a bulk one may rewrite the cache's side files
	small := claim(1)
	grow(3000)
	claim(2)
	large := claim(3)
	t.Logf("100 facts: %s", small)
	t.Logf("3100 facts: %s", large)
	if small.Created != large.Created || small.Opened != large.Opened || small.Renamed != large.Renamed || small.Removed != large.Removed {
		t.Errorf("an append's file operations grow with the ledger: %s at 100 facts, %s at 3,100", small, large)
	}
	// 7 objects, the lock's inode and its link to <ref>.lock; renamed:
	// the objects and the ref. The cache is rewritten in place: every
	// inode renamed over is freed, and on ext4 a freed inode slows the
	// creations after it in its block group (see overwrite).
	if small.Created > 9 || small.Renamed > 8 {
		t.Errorf("an append created %d names and renamed %d, want at most 9 and 8:\n  %s", small.Created, small.Renamed, strings.Join(small.names, "\n  "))
	}
	// Opened: the config, the two queue locks, the lock's inode, the owner
	// note (once), the ref, state.bin (read, then written), the 7
	// objects, the mirror and its index (this room has no handoffs file).
	if small.Opened > 17 {
		t.Errorf("an append opened %d files, want at most 17:\n  %s", small.Opened, strings.Join(small.names, "\n  "))
	}
}
