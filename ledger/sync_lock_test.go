package ledger

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// A `git fetch` killed while it updated the tracking ref leaves git's
// lock there (issue 26, finding 6): sync must not be wedged by what rally's
// own killed fetches leave, and a lock it cannot prove stale is reported as
// this clone's file, with the command that clears it, never as the
// remote's fault; doctor reports it.
func TestSyncTrackingLock(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	_, cs := network(t, 2, &now)
	a, b := cs[0], cs[1]
	a.note(t, "first")
	a.sync(t, true)

	// What a sync killed during its fetch leaves: the private fetch ref of
	// a process that is gone (this pid with another start time: reused),
	// with git's lock beside it.
	self := os.Getpid()
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	left := filepath.Join(a.common(), "refs", "rally-fetch", "origin", fmt.Sprintf("%d.1.%s", self, strings.TrimSpace(string(boot))))
	if err := os.MkdirAll(left, 0o777); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(left, "ledger.lock"), []byte("0000000000000000000000000000000000000000\n"), 0o644)
	b.note(t, "from b")
	b.sync(t, true)
	if r := a.sync(t, true); r.NewFacts == 0 {
		t.Fatalf("sync beside a killed fetch's leftovers brought nothing: %+v", r)
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("the killed fetch's ref and lock are still there: %v", err)
	}

	// git's own lock on the tracking ref (a plain `git fetch` killed): a
	// sync with nothing new still works; one that must move the ref fails
	// naming the local file.
	lock := filepath.Join(a.common(), "refs", "rally-remotes", "origin", "ledger.lock")
	if err := os.WriteFile(lock, []byte("0000000000000000000000000000000000000000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ps, err := a.ledger(t).Doctor(100)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range ps {
		if p.Code == "lock-file" && p.Path == lock && strings.Contains(p.Message, "rm "+lock) {
			found = true
		}
	}
	if !found {
		t.Errorf("doctor does not report %s with the command that clears it: %+v", lock, ps)
	}
	a.sync(t, true)
	b.note(t, "again from b")
	b.sync(t, true)
	t.Setenv("RALLY_LOCK_TIMEOUT", "50ms")
	_, err = a.ledger(t).Sync(SyncOptions{Remote: "origin", Dir: a.dir, Push: true, Backoff: func(int) time.Duration { return 0 }})
	var fe *facts.FailedError
	var le *refs.LockedError
	if !errors.As(err, &fe) || !errors.As(err, &le) || !strings.Contains(err.Error(), lock) || !strings.Contains(fe.Hint, "rm "+lock) {
		t.Fatalf("sync against a lock on its tracking ref: %v (hint %q), want the local file named and how to clear it", err, hintOf(fe))
	}
	var ge *refs.GitError
	if errors.As(err, &ge) {
		t.Errorf("the error is the remote's (a git error): %v", err)
	}
	os.Remove(lock)
	if r := a.sync(t, true); r.NewFacts == 0 {
		t.Fatalf("sync after the lock went brought nothing: %+v", r)
	}
}

func hintOf(fe *facts.FailedError) string {
	if fe == nil {
		return ""
	}
	return fe.Hint
}
