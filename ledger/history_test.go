package ledger

import (
	"strings"
	"testing"
	"time"
)

func TestFactCommits(t *testing.T) {
	dir := gitSandbox(t)
	git(t, dir, "init", "-q", "-b", "main")
	now := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	c := &clone{name: "a", dir: dir, now: &now}
	var ids []string
	for _, s := range []string{"one", "two", "three"} {
		ids = append(ids, c.note(t, s).ID)
		now = now.Add(time.Minute)
	}
	log := strings.Fields(git(t, dir, "log", "--format=%H", "refs/rally/ledger"))
	want := map[string]string{ids[2]: log[0], ids[1]: log[1], ids[0]: log[2]}
	got, err := c.ledger(t).FactCommits(ids, 10)
	if err != nil {
		t.Fatal(err)
	}
	for id, commit := range want {
		if got[id] != commit {
			t.Errorf("fact %s: commit %s, want %s", id, got[id], commit)
		}
	}
	// The walk stops once it found what was asked for.
	got, _ = c.ledger(t).FactCommits(ids[2:], 1)
	if len(got) != 1 || got[ids[2]] != log[0] {
		t.Errorf("newest fact only: %v", got)
	}
	if got, _ := c.ledger(t).FactCommits(ids[:1], 1); len(got) != 0 {
		t.Errorf("one commit read cannot find the oldest fact: %v", got)
	}
}
