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
)

// movingHook installs a pre-receive hook that lands a commit of its own on
// the remote's ledger before each of the first n pushes of it (another
// clone winning the race each time); later pushes pass.
func movingHook(t *testing.T, remote string, n int) {
	t.Helper()
	hook := fmt.Sprintf(`#!/bin/sh
unset GIT_QUARANTINE_PATH GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES
export GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@example.com GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@example.com
echo x >>moves
[ "$(wc -l <moves)" -gt %d ] && exit 0
old=$(git rev-parse %s)
new=$(git commit-tree "$old^{tree}" -p "$old" -m "another clone landed")
git update-ref %s "$new" "$old"
`, n, LedgerRef, LedgerRef)
	if err := os.WriteFile(filepath.Join(remote, "hooks", "pre-receive"), []byte(hook), 0o777); err != nil {
		t.Fatal(err)
	}
}

func syncWith(t *testing.T, c *clone, o SyncOptions) (*SyncResult, error) {
	t.Helper()
	o.Remote, o.Dir, o.Push = "origin", c.dir, true
	if o.Backoff == nil {
		o.Backoff = func(int) time.Duration { return 0 }
	}
	return c.ledger(t).Sync(o)
}

// A remote that moves before each of 12 pushes (others keep landing): the
// sync keeps going, past the 5 rounds it used to give up after.
func TestSyncRetriesWhileTheRemoteMoves(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	remote, cs := network(t, 1, &now)
	a := cs[0]
	a.note(t, "first")
	a.sync(t, true)
	movingHook(t, remote, 12)
	a.note(t, "second")
	r, err := syncWith(t, a, SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Rounds != 13 || !r.Pushed {
		t.Fatalf("sync: %d rounds, pushed %v; want 13 rounds and the push", r.Rounds, r.Pushed)
	}
	if got := strings.TrimSpace(git(t, remote, "rev-parse", LedgerRef)); got != r.Head.String() {
		t.Fatalf("remote at %s, sync pushed %s", got, r.Head)
	}
}

// A lock left on the remote rejects every push and nothing lands there:
// the sync gives up after Stalled rounds and says what git said.
func TestSyncGivesUpOnAStuckRemote(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	remote, cs := network(t, 1, &now)
	a := cs[0]
	a.note(t, "first")
	a.sync(t, true)
	if err := os.WriteFile(filepath.Join(remote, "refs", "rally", "ledger.lock"), nil, 0o666); err != nil {
		t.Fatal(err)
	}
	a.note(t, "second")
	r, err := syncWith(t, a, SyncOptions{Stalled: 4})
	var ge *SyncGaveUpError
	var fe *facts.FailedError
	if !errors.As(err, &ge) || !errors.As(err, &fe) {
		t.Fatalf("sync: %v, want a SyncGaveUpError inside a FailedError", err)
	}
	if ge.Rounds != 4 || ge.Stalled != 4 || r.Rounds != 4 || r.Pushed {
		t.Fatalf("gave up after %d rounds (%d stalled), result %+v; want 4 and 4", ge.Rounds, ge.Stalled, r)
	}
	for _, want := range []string{"origin", "gave up after 4 rounds", "did not move in the last 4 rounds", "ledger.lock"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if !strings.Contains(fe.Hint, "git rally sync origin") {
		t.Errorf("hint %q", fe.Hint)
	}
}

// Others landing forever still ends: at MaxRounds, or at Timeout.
func TestSyncGivesUpAtItsBounds(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	remote, cs := network(t, 1, &now)
	a := cs[0]
	a.note(t, "first")
	a.sync(t, true)
	movingHook(t, remote, 1000)
	a.note(t, "second")
	var ge *SyncGaveUpError
	_, err := syncWith(t, a, SyncOptions{MaxRounds: 6})
	if !errors.As(err, &ge) || ge.Rounds != 6 || ge.Stalled != 1 || !strings.Contains(err.Error(), "others kept landing") {
		t.Fatalf("MaxRounds 6: %v", err)
	}
	clock := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	tick := func() time.Time { clock = clock.Add(50 * time.Second); return clock }
	_, err = syncWith(t, a, SyncOptions{Now: tick})
	if !errors.As(err, &ge) || ge.Rounds != 3 || !strings.Contains(err.Error(), "in 2m30s") {
		t.Fatalf("Timeout 2m, 50 s a round: %v", err)
	}
}

// The pause between rounds doubles from 20 ms to 8 s, jittered between
// half and all of it: a few quick rounds when two clones race, seconds
// apart when fifty do.
func TestSyncBackoffBounds(t *testing.T) {
	for round := 2; round <= 40; round++ {
		top := min(20*time.Millisecond<<min(round-2, 10), 8*time.Second)
		for i := 0; i < 50; i++ {
			if d := defaultBackoff(round); d < top/2 || d > top {
				t.Fatalf("round %d: pause %s, want %s to %s", round, d, top/2, top)
			}
		}
	}
	for i := 0; i < 50; i++ {
		if d := defaultBackoff(2); d < 10*time.Millisecond || d > 20*time.Millisecond {
			t.Fatalf("round 2 pauses %s, want 10 to 20 ms", d)
		}
		if d := defaultBackoff(40); d < 4*time.Second || d > 8*time.Second {
			t.Fatalf("round 40 pauses %s, want 4 to 8 s", d)
		}
	}
}
