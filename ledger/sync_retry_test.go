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

// Others landing forever still ends, at MaxRounds.
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
}

// tick is an injected clock that moves on by step at every reading.
func tick(step time.Duration) func() time.Time {
	clock := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	return func() time.Time { clock = clock.Add(step); return clock }
}

// A remote that keeps moving is progress however long it takes: with 50 s
// a round (a loaded machine, fifty clones queueing for one ref), twelve
// rounds lost to others landing (10 minutes) do not end the sync; the
// 13th lands. Timeout bounds only the time the remote stands still.
func TestSyncNoTimeoutWhileTheRemoteMoves(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	remote, cs := network(t, 1, &now)
	a := cs[0]
	a.note(t, "first")
	a.sync(t, true)
	movingHook(t, remote, 12)
	a.note(t, "second")
	r, err := syncWith(t, a, SyncOptions{Now: tick(50 * time.Second)})
	if err != nil {
		t.Fatalf("sync gave up while others kept landing: %v", err)
	}
	if r.Rounds != 13 || !r.Pushed {
		t.Fatalf("sync: %d rounds, pushed %v; want 13 rounds and the push", r.Rounds, r.Pushed)
	}
}

// stuckHook lands a commit before each of the first n pushes, then leaves
// a lock on the remote's ledger: nothing lands there any more and every
// push is rejected.
func stuckHook(t *testing.T, remote string, n int) {
	t.Helper()
	hook := fmt.Sprintf(`#!/bin/sh
unset GIT_QUARANTINE_PATH GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES
export GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@example.com GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@example.com
echo x >>moves
[ "$(wc -l <moves)" -gt %d ] && exit 0
old=$(git rev-parse %s)
new=$(git commit-tree "$old^{tree}" -p "$old" -m "another clone landed")
git update-ref %s "$new" "$old"
[ "$(wc -l <moves)" -eq %d ] && : >refs/rally/ledger.lock
exit 0
`, n, LedgerRef, LedgerRef, n)
	if err := os.WriteFile(filepath.Join(remote, "hooks", "pre-receive"), []byte(hook), 0o777); err != nil {
		t.Fatal(err)
	}
}

// A remote that stops moving still ends the sync, by the time it stands
// still (Timeout, counted from the last round that found it moved) when
// that comes before Stalled rounds: five rounds of others landing (4 min
// at 50 s a round) are not held against it, then three rounds against a
// remote that stays put (2m30s) end it, naming the stall.
func TestSyncTimeoutCountsTheStandstill(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	remote, cs := network(t, 1, &now)
	a := cs[0]
	a.note(t, "first")
	a.sync(t, true)
	stuckHook(t, remote, 5)
	a.note(t, "second")
	r, err := syncWith(t, a, SyncOptions{Now: tick(50 * time.Second), Stalled: 100})
	var ge *SyncGaveUpError
	if !errors.As(err, &ge) {
		t.Fatalf("sync against a remote that stopped moving: %v, %+v; want it to give up", err, r)
	}
	// Rounds 1-6 find the remote moved (the hook lands before each of the
	// first five pushes, the 6th fetch finds the 5th's); 7, 8 and 9 find
	// it where 6 did, the last of them 2m30s after round 6: with the
	// rejection of round 6 that makes 4 against one head.
	if ge.Rounds != 9 || ge.Stalled != 4 || r.Pushed {
		t.Fatalf("gave up after %d rounds (%d stalled), pushed %v; want 9 rounds, 4 stalled: %v", ge.Rounds, ge.Stalled, r.Pushed, err)
	}
	if !strings.Contains(err.Error(), "did not move in the last 4 rounds") {
		t.Fatalf("error %q does not name the stall", err)
	}
	// And with the default bounds it ends too: at the 8th stalled round.
	os.Remove(filepath.Join(remote, "moves"))
	stuckHook(t, remote, 0)
	_, err = syncWith(t, a, SyncOptions{Now: tick(time.Second)})
	if !errors.As(err, &ge) || ge.Stalled != 8 {
		t.Fatalf("default bounds against a stuck remote: %v", err)
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

// droppingHook kills the remote's receive-pack (the connection drops mid
// push, as a server overwhelmed by fifty clones did: "Connection reset by
// peer") at each of the first n pushes; later pushes pass.
func droppingHook(t *testing.T, remote string, n int) {
	t.Helper()
	hook := fmt.Sprintf(`#!/bin/sh
echo x >>drops
[ "$(wc -l <drops)" -gt %d ] && exit 0
kill -9 $PPID
`, n)
	if err := os.WriteFile(filepath.Join(remote, "hooks", "pre-receive"), []byte(hook), 0o777); err != nil {
		t.Fatal(err)
	}
}

// A push whose connection drops is fetched, merged and pushed again, like
// a rejected one; a remote that drops every push ends the sync after
// three drops in a row, with git's words.
func TestSyncRetriesADroppedPush(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	remote, cs := network(t, 1, &now)
	a := cs[0]
	a.note(t, "first")
	a.sync(t, true)
	droppingHook(t, remote, 2)
	a.note(t, "second")
	r, err := syncWith(t, a, SyncOptions{})
	if err != nil {
		t.Fatalf("sync after two dropped pushes: %v", err)
	}
	if r.Rounds != 3 || !r.Pushed {
		t.Fatalf("sync: %d rounds, pushed %v; want 3 rounds and the push", r.Rounds, r.Pushed)
	}
	if got := strings.TrimSpace(git(t, remote, "rev-parse", LedgerRef)); got != r.Head.String() {
		t.Fatalf("remote at %s, sync pushed %s", got, r.Head)
	}

	os.Remove(filepath.Join(remote, "drops"))
	droppingHook(t, remote, 1000)
	a.note(t, "third")
	r, err = syncWith(t, a, SyncOptions{})
	if err == nil || r.Pushed {
		t.Fatalf("sync against a remote that drops every push: %v, pushed %v", err, r.Pushed)
	}
	if r.Rounds != 3 || !strings.Contains(err.Error(), "hung up") {
		t.Fatalf("sync ended after %d rounds: %v; want 3 and git's words", r.Rounds, err)
	}
}
