package testscripts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The tests in this file run the real binary as separate processes (the
// binary testscript.Main put on PATH) against one repository.

func newRepo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	gitT(t, dir, "init", "-q", "-b", "main")
	gitT(t, dir, "config", "user.name", "Test")
	gitT(t, dir, "config", "user.email", "test@example.com")
	rally(t, dir, "init")
	return dir
}

func gitT(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

type result struct {
	code           int
	stdout, stderr string
}

func run(dir string, env []string, args ...string) result {
	cmd := exec.Command("git-rally", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		code = -1
	}
	return result{code, out.String(), errb.String()}
}

func rally(t testing.TB, dir string, args ...string) string {
	t.Helper()
	r := run(dir, nil, args...)
	if r.code != 0 {
		t.Fatalf("git-rally %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
	}
	return r.stdout
}

func logIDs(t testing.TB, dir string) map[string]bool {
	t.Helper()
	var fs []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(rally(t, dir, "log", "--json")), &fs); err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, f := range fs {
		ids[f.ID] = true
	}
	return ids
}

func firstField(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// 8 processes x 50 appends: exactly 400 new facts, every acknowledged id
// present, a clean fsck.
func TestConcurrentAppends(t *testing.T) {
	dir := newRepo(t)
	const workers, each = 8, 50
	var mu sync.Mutex
	var acked []string
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				r := run(dir, nil, "note", "--tool", fmt.Sprintf("agent:%d", w), "--subject", fmt.Sprintf("note %d of %d", i, w))
				if r.code != 0 {
					t.Errorf("worker %d append %d: exit %d: %s", w, i, r.code, r.stderr)
					return
				}
				mu.Lock()
				acked = append(acked, firstField(r.stdout))
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	ids := logIDs(t, dir)
	if len(ids) != workers*each {
		t.Fatalf("ledger holds %d facts, want %d", len(ids), workers*each)
	}
	for _, id := range acked {
		if !ids[id] {
			t.Errorf("acknowledged fact %s is missing", id)
		}
	}
	if n := gitT(t, dir, "rev-list", "--count", "refs/rally/ledger"); n != fmt.Sprint(workers*each+1) {
		t.Errorf("ledger history has %s commits, want %d", n, workers*each+1)
	}
	gitT(t, dir, "fsck", "--strict", "--no-dangling")
}

// race starts n processes with argv(i) at the same moment and checks that
// exactly one exits 0 and every other is refused with exit 3 and a stderr
// that holds refusal.
func race(t *testing.T, dir string, n, trial int, refusal string, argv func(i int) []string) {
	t.Helper()
	codes := make([]int, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			r := run(dir, nil, argv(i)...)
			codes[i] = r.code
			if r.code == 3 && !strings.Contains(r.stderr, refusal) {
				t.Errorf("refusal without %q: %s", refusal, r.stderr)
			}
		}(i)
	}
	close(start)
	wg.Wait()
	wins, refused := 0, 0
	for _, c := range codes {
		switch c {
		case 0:
			wins++
		case 3:
			refused++
		default:
			t.Errorf("unexpected exit %d", c)
		}
	}
	if wins != 1 || refused != n-1 {
		t.Fatalf("trial %d: %d winners and %d refused, want 1 and %d (codes %v)", trial, wins, refused, n-1, codes)
	}
	if got := strings.TrimSpace(rally(t, dir, "room", "--query", "claims.#")); got != "1" {
		t.Fatalf("room holds %s claims, want 1", got)
	}
}

// 8 processes claim one path at once: exactly one wins.
func TestClaimRace(t *testing.T) {
	for trial := 0; trial < 3; trial++ {
		dir := newRepo(t)
		race(t, dir, 8, trial, "claim conflict: agent:", func(i int) []string {
			// Alternate nested scopes so every pair overlaps.
			scope := "src/api/"
			if i%2 == 1 {
				scope = "src/api/handler.go"
			}
			return []string{"claim", scope, "--tool", fmt.Sprintf("agent:%d", i)}
		})
	}
}

// Plain git moves the ledger ref with update-ref (its own lock protocol)
// while rally appends: nothing is lost on either side.
func TestUpdateRefInterleaving(t *testing.T) {
	dir := newRepo(t)
	stop := make(chan struct{})
	var gitMoves []string
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			old, err := exec.Command("git", "-C", dir, "rev-parse", "refs/rally/ledger").Output()
			if err != nil {
				continue
			}
			o := strings.TrimSpace(string(old))
			c := exec.Command("git", "-C", dir, "commit-tree", o+"^{tree}", "-p", o, "-m", "git touched the ledger")
			nw, err := c.Output()
			if err != nil {
				continue
			}
			n := strings.TrimSpace(string(nw))
			if out, err := exec.Command("git", "-C", dir, "-c", "core.filesRefLockTimeout=500", "update-ref", "refs/rally/ledger", n, o).CombinedOutput(); err == nil {
				gitMoves = append(gitMoves, n)
			} else if !strings.Contains(string(out), "lock") {
				t.Errorf("update-ref: %s", out)
			}
		}
	}()
	var acked []string
	var mu sync.Mutex
	var wwg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wwg.Add(1)
		go func(w int) {
			defer wwg.Done()
			rng := rand.New(rand.NewSource(int64(w)))
			for i := 0; i < 50; i++ {
				// Jitter between appends leaves git gaps to win a race in;
				// nothing here waits for a rule's time to pass.
				time.Sleep(time.Duration(rng.Intn(20)) * time.Millisecond)
				r := run(dir, nil, "note", "--tool", fmt.Sprintf("agent:%d", w), "--subject", "x")
				if r.code != 0 {
					t.Errorf("append: exit %d: %s", r.code, r.stderr)
					return
				}
				mu.Lock()
				acked = append(acked, firstField(r.stdout))
				mu.Unlock()
			}
		}(w)
	}
	wwg.Wait()
	close(stop)
	wg.Wait()
	ids := logIDs(t, dir)
	for _, id := range acked {
		if !ids[id] {
			t.Errorf("acknowledged fact %s lost", id)
		}
	}
	if len(ids) != 100 {
		t.Errorf("ledger holds %d facts, want 100", len(ids))
	}
	for _, c := range gitMoves {
		if exec.Command("git", "-C", dir, "merge-base", "--is-ancestor", c, "refs/rally/ledger").Run() != nil {
			t.Errorf("git's update to %s was lost", c)
		}
	}
	t.Logf("%d rally appends and %d git update-refs interleaved", len(acked), len(gitMoves))
	if len(gitMoves) == 0 {
		t.Errorf("git never moved the ref: the test did not interleave")
	}
	gitT(t, dir, "fsck", "--strict", "--no-dangling")
}

// Appending processes killed with SIGKILL at random moments: every
// acknowledged fact survives, fsck is clean, and the next append works,
// removing the ref lock a killed rally left (it proves the lock is its
// own: its note names the lock's inode and a process that is gone). The
// test ages the lock file too: age alone must not matter either way.
func TestKilledAppends(t *testing.T) {
	dir := newRepo(t)
	rng := rand.New(rand.NewSource(7))
	var acked []string
	killed := 0
	for round := 0; round < 40; round++ {
		cmd := exec.Command("git-rally", "claim", fmt.Sprintf("src/f%d.go", round), "--tool", "agent:k")
		cmd.Dir = dir
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		delay := time.Duration(rng.Intn(12000)) * time.Microsecond
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err == nil {
				acked = append(acked, firstField(out.String()))
			}
		case <-time.After(delay):
			cmd.Process.Signal(syscall.SIGKILL)
			if err := <-done; err == nil {
				acked = append(acked, firstField(out.String()))
			} else {
				killed++
			}
		}
		lock := filepath.Join(dir, ".git", "refs", "rally", "ledger.lock")
		if _, err := os.Stat(lock); err == nil {
			old := time.Now().Add(-time.Minute)
			os.Chtimes(lock, old, old)
		}
	}
	r := run(dir, nil, "note", "--tool", "agent:k", "--subject", "after the kills")
	if r.code != 0 {
		t.Fatalf("append after kills: exit %d: %s", r.code, r.stderr)
	}
	ids := logIDs(t, dir)
	for _, id := range acked {
		if !ids[id] {
			t.Errorf("acknowledged fact %s lost", id)
		}
	}
	t.Logf("%d of 40 appends were acknowledged, %d killed", len(acked), killed)
	if killed == 0 {
		t.Errorf("no append was killed: the test did not test kills")
	}
	gitT(t, dir, "fsck", "--strict", "--no-dangling")
	if _, err := os.Stat(filepath.Join(dir, ".git", "refs", "rally", "ledger.lock")); err == nil {
		t.Errorf("a ref lock is left over after a successful append")
	}
	if d := run(dir, nil, "doctor"); d.code != 0 {
		t.Errorf("doctor after kills: exit %d\n%s%s", d.code, d.stdout, d.stderr)
	}
}

// A fact written in a linked worktree is in the main checkout's room and
// the other way round.
func TestLinkedWorktreeSharesTheRoom(t *testing.T) {
	dir := newRepo(t)
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o666)
	gitT(t, dir, "add", "a.txt")
	gitT(t, dir, "commit", "-qm", "a")
	wt := filepath.Join(t.TempDir(), "linked")
	gitT(t, dir, "worktree", "add", "-q", wt, "-b", "side")
	os.MkdirAll(filepath.Join(wt, "sub"), 0o777)
	rally(t, filepath.Join(wt, "sub"), "claim", "../a.txt", "--tool", "agent:linked")
	if got := strings.TrimSpace(rally(t, dir, "room", "--query", "claims.0.scopes.0")); got != "file:a.txt" {
		t.Fatalf("main checkout sees %q, want file:a.txt", got)
	}
	rally(t, dir, "note", "--tool", "agent:main", "--subject", "from main")
	if got := strings.TrimSpace(rally(t, wt, "room", "--query", "totals.by_kind.note")); got != "1" {
		t.Fatalf("linked worktree sees %q notes, want 1", got)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "worktrees", "linked", "refs", "rally")); err == nil {
		t.Fatalf("the linked worktree got a private ledger")
	}
}
