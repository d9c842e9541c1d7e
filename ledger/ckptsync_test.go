package ledger

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-rally/git-rally/refs"
)

// A checkpoint's push never fails a sync: a remote that refuses the
// checkpoint ref, or any push that carries one, still gets the ledger.
func TestCheckpointPushNeverFailsSync(t *testing.T) {
	now := t0
	remote, cs := network(t, 1, &now)
	c := cs[0]
	dir := t.TempDir()
	key, _ := writeKey(t, dir, "lead")
	git(t, c.dir, "config", "user.signingKey", key)
	for i, hook := range []string{
		// update: refuses the checkpoint ref alone
		"#!/bin/sh\ncase \"$1\" in refs/rally/checkpoints/*) exit 1;; esac\nexit 0\n",
		// pre-receive: refuses any push that carries a checkpoint
		"#!/bin/sh\nif grep -q refs/rally/checkpoints/; then exit 1; fi\nexit 0\n",
	} {
		name := []string{"update", "pre-receive"}[i]
		p := filepath.Join(remote, "hooks", name)
		if err := os.WriteFile(p, []byte(hook), 0o755); err != nil {
			t.Fatal(err)
		}
		c.note(t, "before "+name)
		if _, err := c.ledger(t).WriteCheckpoint(); err != nil {
			t.Fatal(err)
		}
		res := c.sync(t, true)
		if !res.Pushed {
			t.Fatalf("%s: the ledger was not pushed", name)
		}
		if got, want := strings.TrimSpace(git(t, remote, "rev-parse", LedgerRef)), mustHead(t, c).String(); got != want {
			t.Fatalf("%s: the remote's ledger is %s, want %s", name, got, want)
		}
		if out := git(t, remote, "for-each-ref", "refs/rally/checkpoints"); out != "" {
			t.Fatalf("%s: the remote took the checkpoint: %s", name, out)
		}
		if name == "pre-receive" {
			// Refused as a whole: not offered again until it changes.
			c.note(t, "again")
			n := refs.GitCount
			c.sync(t, true)
			if got := refs.GitCount - n; got != 2 {
				t.Errorf("a sync after a refused checkpoint ran %d git processes, want 2 (fetch, push)", got)
			}
		}
		os.Remove(p)
	}
	// Accepted: pushed with the ledger, and kept as the remote's after a fetch.
	c.note(t, "accepted")
	res, err := c.ledger(t).WriteCheckpoint()
	if err != nil {
		t.Fatal(err)
	}
	c.sync(t, true)
	if got := strings.TrimSpace(git(t, remote, "rev-parse", res.Ref)); got != res.Commit.String() {
		t.Fatalf("the remote's checkpoint is %s, want %s", got, res.Commit)
	}
	c.sync(t, true)
	if got := strings.TrimSpace(git(t, c.dir, "rev-parse", TrackingPrefix+"origin/checkpoints/"+strings.TrimPrefix(res.Ref, CheckpointRefPrefix))); got != res.Commit.String() {
		t.Fatalf("the fetched checkpoint is %s, want %s", got, res.Commit)
	}
}

// rally.checkpoint: sync writes a checkpoint of the head it pushes; no
// signing key is a warning, not a failed sync.
func TestCheckpointBySync(t *testing.T) {
	now := t0
	remote, cs := network(t, 1, &now)
	c := cs[0]
	git(t, c.dir, "config", "rally.checkpoint", "true")
	c.note(t, "one")
	l := c.ledger(t)
	if _, err := l.Sync(SyncOptions{Remote: "origin", Dir: c.dir, Push: true}); err != nil {
		t.Fatal(err)
	}
	if len(l.Warnings) != 1 || !strings.Contains(l.Warnings[0], "user.signingKey") {
		t.Fatalf("warnings %q", l.Warnings)
	}
	key, _ := writeKey(t, t.TempDir(), "lead")
	git(t, c.dir, "config", "user.signingKey", key)
	c.note(t, "two")
	c.sync(t, true)
	ref := mustRef(t, c)
	sc, err := c.ledger(t).Store.ReadSignedCommit(mustHash(t, strings.TrimSpace(git(t, remote, "rev-parse", ref))))
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := parseCkptMessage(sc.Message); !ok || m.ledger != mustHead(t, c) {
		t.Fatalf("the remote's checkpoint %q is not of the head %s", sc.Message, mustHead(t, c))
	}
}

func mustHash(t *testing.T, s string) refs.Hash {
	t.Helper()
	h, err := refs.ParseHash(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
