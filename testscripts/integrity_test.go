package testscripts

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The stress tests here run rally's appends beside git's own maintenance
// and transactions, the way a teammate's shell or an IDE runs them. Each
// is bounded in appends, not in time.

// appendBeside runs writers x n note appends while beside runs in a loop,
// and checks that every acknowledged fact is in the ledger, that no append
// failed, and that fsck is clean. It returns the acknowledged count and
// how often beside ran.
func appendBeside(t *testing.T, dir string, writers, n int, pause time.Duration, beside func() error) (int, int) {
	t.Helper()
	stop := make(chan struct{})
	loops := 0
	var besideErr error
	var bwg sync.WaitGroup
	bwg.Add(1)
	go func() {
		defer bwg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := beside(); err != nil && besideErr == nil {
				besideErr = err
			}
			loops++
		}
	}()
	var mu sync.Mutex
	var acked []string
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < n; i++ {
				time.Sleep(pause)
				r := run(dir, nil, "note", "--tool", fmt.Sprintf("agent:%d", w), "--subject", fmt.Sprintf("n%d", i))
				if r.code != 0 {
					t.Errorf("append %d of agent:%d: exit %d: %s", i, w, r.code, r.stderr)
					continue
				}
				mu.Lock()
				acked = append(acked, firstField(r.stdout))
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	close(stop)
	bwg.Wait()
	if besideErr != nil {
		t.Errorf("beside the appends: %v", besideErr)
	}
	if loops == 0 {
		t.Fatalf("git never ran beside the appends")
	}
	// The cache could hide a lost object: read the ledger from scratch.
	os.RemoveAll(filepath.Join(dir, ".git", "rally", "cache"))
	ids := logIDs(t, dir)
	lost := 0
	for _, id := range acked {
		if !ids[id] {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d acknowledged facts lost", lost, len(acked))
	}
	gitT(t, dir, "fsck", "--strict", "--no-dangling")
	if r := run(dir, nil, "doctor"); r.code != 0 {
		t.Errorf("doctor: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	t.Logf("%d appends acknowledged, %d found, beside %d git runs", len(acked), len(acked)-lost, loops)
	return len(acked), loops
}

func stressSize() (int, int) {
	if testing.Short() {
		return 2, 40
	}
	return 3, 100
}

// `git gc --prune=now` beside appends deletes every loose object nothing
// references yet: an append's objects, written before its ref moves, are
// fair game until the ref moves and gc ends. None may be lost.
func TestAppendsBesideGCPruneNow(t *testing.T) {
	dir := newRepo(t)
	w, n := 2, 40
	if testing.Short() {
		n = 20
	}
	transient := 0
	appendBeside(t, dir, w, n, 0, func() error {
		out, err := exec.Command("git", "-C", dir, "gc", "--prune=now", "--quiet").CombinedOutput()
		switch {
		case err == nil || strings.Contains(string(out), "lock"):
		case strings.Contains(string(out), "does not point to a valid object"):
			// The previous gc pruned an object of an append that had
			// just moved the ref, and this gc started before the append
			// wrote it back (Ensure polls every millisecond while a gc
			// runs). Nothing is lost; the next gc must pass.
			transient++
		default:
			return fmt.Errorf("git gc: %v: %s", err, out)
		}
		return nil
	})
	// What the issue found: every gc after the race failed for good.
	gitT(t, dir, "gc", "--prune=now", "--quiet")
	t.Logf("%d gc runs met an object an append was writing back", transient)
}

// `git repack -a -d` removes the fan-out directories it empties, under an
// object being written into them: the append retries, never fails.
func TestAppendsBesideRepack(t *testing.T) {
	dir := newRepo(t)
	w, n := stressSize()
	appendBeside(t, dir, w, n, 0, func() error {
		out, err := exec.Command("git", "-C", dir, "repack", "-a", "-d", "-q").CombinedOutput()
		if err != nil {
			return fmt.Errorf("git repack: %v: %s", err, out)
		}
		return nil
	})
}

// A `git update-ref --stdin` transaction holds refs/rally/ledger.lock
// between prepare and commit for as long as it likes. Rally never
// removes it: appends wait; every git commit that said "ok" is in the
// history, and every rally append that said ok is in the ledger.
func TestAppendsBesideHeldTransaction(t *testing.T) {
	dir := newRepo(t)
	var mu sync.Mutex
	var gitCommits []string
	hold := 300 * time.Millisecond
	_, loops := appendBeside(t, dir, 2, 25, 50*time.Millisecond, func() error {
		old := gitT(t, dir, "rev-parse", "refs/rally/ledger")
		c := gitT(t, dir, "commit-tree", old+"^{tree}", "-p", old, "-m", "git transaction")
		cmd := exec.Command("git", "-C", dir, "-c", "core.filesRefLockTimeout=2000", "update-ref", "--stdin")
		in, _ := cmd.StdinPipe()
		outp, _ := cmd.StdoutPipe()
		cmd.Stderr = io.Discard
		if err := cmd.Start(); err != nil {
			return err
		}
		rd := bufio.NewReader(outp)
		fmt.Fprintf(in, "start\nupdate refs/rally/ledger %s %s\nprepare\n", c, old)
		line, _ := rd.ReadString('\n')
		line2, _ := rd.ReadString('\n')
		if strings.TrimSpace(line) != "start: ok" || strings.TrimSpace(line2) != "prepare: ok" {
			// rally held the lock, or moved the ref first: not this round.
			in.Close()
			cmd.Wait()
			return nil
		}
		time.Sleep(hold) // the transaction holds git's lock; rally must wait, not steal
		fmt.Fprintf(in, "commit\n")
		line3, _ := rd.ReadString('\n')
		in.Close()
		cmd.Wait()
		if strings.TrimSpace(line3) != "commit: ok" {
			return fmt.Errorf("git transaction: %q after prepare: ok", line3)
		}
		mu.Lock()
		gitCommits = append(gitCommits, c)
		mu.Unlock()
		// A person's transactions come with gaps; back to back they would
		// starve every other writer, git's own included.
		time.Sleep(100 * time.Millisecond)
		return nil
	})
	for _, c := range gitCommits {
		if exec.Command("git", "-C", dir, "merge-base", "--is-ancestor", c, "refs/rally/ledger").Run() != nil {
			t.Errorf("git's transaction %s said ok but is not in the history", c)
		}
	}
	t.Logf("%d git transactions committed after holding the lock %s each (%d tries)", len(gitCommits), hold, loops)
	if len(gitCommits) == 0 {
		t.Errorf("no git transaction held the lock: the test did not test it")
	}
}

// A lock rally cannot prove a dead rally left, however old, is waited for
// and then reported: exit 1, the file named, nothing written.
func TestForeignLockIsNotRemoved(t *testing.T) {
	dir := newRepo(t)
	lock := filepath.Join(dir, ".git", "refs", "rally", "ledger.lock")
	if err := os.WriteFile(lock, []byte("0000000000000000000000000000000000000000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-24 * time.Hour)
	os.Chtimes(lock, old, old)
	before := gitT(t, dir, "rev-parse", "refs/rally/ledger")
	r := run(dir, []string{"RALLY_LOCK_TIMEOUT=200ms"}, "note", "--tool", "a", "--subject", "x")
	if r.code != 1 {
		t.Fatalf("append beside a foreign lock: exit %d, want 1\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, lock) || !strings.Contains(r.stderr, "hint: remove") {
		t.Errorf("the error does not name the lock file and what to do:\n%s", r.stderr)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Errorf("the foreign lock was removed")
	}
	if after := gitT(t, dir, "rev-parse", "refs/rally/ledger"); after != before {
		t.Errorf("the ledger moved")
	}
	d := run(dir, nil, "doctor", "--json")
	if !strings.Contains(d.stdout, `"lock-file"`) {
		t.Errorf("doctor does not report the lock file:\n%s", d.stdout)
	}
}

// A git transaction holds the lock for longer than rally's old 5 s stale
// age: rally waits for it (RALLY_LOCK_TIMEOUT above the hold), git's
// commit lands, and rally's fact lands after it.
func TestLongGitTransaction(t *testing.T) {
	if testing.Short() {
		t.Skip("holds a lock for 6 s")
	}
	dir := newRepo(t)
	old := gitT(t, dir, "rev-parse", "refs/rally/ledger")
	c := gitT(t, dir, "commit-tree", old+"^{tree}", "-p", old, "-m", "git transaction")
	cmd := exec.Command("git", "-C", dir, "update-ref", "--stdin")
	in, _ := cmd.StdinPipe()
	outp, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(outp)
	fmt.Fprintf(in, "start\nupdate refs/rally/ledger %s %s\nprepare\n", c, old)
	rd.ReadString('\n')
	if l, _ := rd.ReadString('\n'); strings.TrimSpace(l) != "prepare: ok" {
		t.Fatalf("prepare: %q", l)
	}
	done := make(chan result, 1)
	go func() {
		done <- run(dir, []string{"RALLY_LOCK_TIMEOUT=20s"}, "note", "--tool", "a", "--subject", "waited")
	}()
	time.Sleep(6 * time.Second) // longer than the age rally once took for stale
	fmt.Fprintf(in, "commit\n")
	l, _ := rd.ReadString('\n')
	in.Close()
	cmd.Wait()
	if strings.TrimSpace(l) != "commit: ok" {
		t.Fatalf("git's commit after holding the lock: %q", l)
	}
	r := <-done
	if r.code != 0 {
		t.Fatalf("rally's append: exit %d: %s", r.code, r.stderr)
	}
	if exec.Command("git", "-C", dir, "merge-base", "--is-ancestor", c, "refs/rally/ledger").Run() != nil {
		t.Errorf("git's transaction said ok but is not in the history")
	}
	if !logIDs(t, dir)[firstField(r.stdout)] {
		t.Errorf("rally's acknowledged fact is not in the ledger")
	}
}
