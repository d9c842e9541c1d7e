package ledger

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-rally/git-rally/refs"
)

// pruneAppend deletes, as `git prune --expire=now` does beside appends
// whose ref it read before they moved it, the loose objects that the
// ledger's last n appends wrote: their commits, trees and blobs. It
// returns the ids of the facts those appends acknowledged.
func pruneAppends(t *testing.T, c *clone, n int) {
	t.Helper()
	l := c.ledger(t)
	head, err := l.Head()
	if err != nil {
		t.Fatal(err)
	}
	h := head
	for i := 0; i < n; i++ {
		cm, err := l.Store.ReadCommit(h)
		if err != nil {
			t.Fatal(err)
		}
		parent := cm.Parents[0]
		// What this append wrote: everything its commit reaches that
		// its parent does not.
		out := git(t, c.dir, "rev-list", "--objects", h.String(), "^"+parent.String())
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			id := strings.Fields(line)[0]
			p := filepath.Join(c.common(), "objects", id[:2], id[2:])
			if err := os.Remove(p); err != nil {
				t.Fatalf("removing %s: %v (not loose?)", id, err)
			}
		}
		h = parent
	}
}

func fsckClean(t *testing.T, dir string) {
	t.Helper()
	out, err := refs.Git(dir, nil, "fsck", "--no-dangling", "--no-progress")
	if err != nil {
		t.Fatalf("git fsck: %v\n%s", err, out)
	}
	if strings.Contains(out, "missing") || strings.Contains(out, "broken") {
		t.Fatalf("git fsck: %s", out)
	}
}

// The objects of acknowledged appends are pruned (issue 26, finding 5):
// the next sync writes every fact back from this clone's cache, pushes,
// and git fsck is clean again, here and on the remote.
func TestHealAfterPruneBySync(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	remote, cs := network(t, 2, &now)
	a, b := cs[0], cs[1]
	var acked []string
	for i := 0; i < 3; i++ {
		acked = append(acked, a.note(t, "published").ID)
	}
	a.sync(t, true)
	b.sync(t, true)
	acked = append(acked, b.note(t, "from b").ID)
	b.sync(t, true)
	for i := 0; i < 4; i++ {
		acked = append(acked, a.note(t, "not pushed yet").ID)
	}
	pruneAppends(t, a, 3)
	if _, err := refs.Git(a.dir, nil, "fsck", "--no-dangling"); err == nil {
		t.Fatal("the pruned ledger passes git fsck: the reproduction removed nothing")
	}
	r := a.sync(t, true)
	if !r.Healed || !r.Pushed {
		t.Fatalf("sync: healed %v, pushed %v", r.Healed, r.Pushed)
	}
	b.sync(t, true)
	for _, c := range cs {
		have := map[string]bool{}
		for _, id := range c.ids(t) {
			have[id] = true
		}
		for _, id := range acked {
			if !have[id] {
				t.Errorf("%s lacks acknowledged fact %s", c.name, id)
			}
		}
		fsckClean(t, c.dir)
		if ps, err := c.ledger(t).Doctor(1000); err != nil || len(ps) != 0 {
			t.Errorf("%s: doctor: %v %+v", c.name, err, ps)
		}
	}
	fsckClean(t, remote)
}

// Without a remote: the next append heals (its head's commit was
// pruned), and so does Heal (doctor --repair) when an older one was.
func TestHealAfterPruneByAppendAndRepair(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	_, cs := network(t, 1, &now)
	a := cs[0]
	var acked []string
	for i := 0; i < 5; i++ {
		acked = append(acked, a.note(t, "n").ID)
	}
	pruneAppends(t, a, 2)
	acked = append(acked, a.note(t, "after the prune").ID)
	check := func(what string) {
		t.Helper()
		have := map[string]bool{}
		for _, id := range a.ids(t) {
			have[id] = true
		}
		for _, id := range acked {
			if !have[id] {
				t.Errorf("%s: acknowledged fact %s is gone", what, id)
			}
		}
		fsckClean(t, a.dir)
		if ps, err := a.ledger(t).Doctor(1000); err != nil || len(ps) != 0 {
			t.Errorf("%s: doctor: %v %+v", what, err, ps)
		}
	}
	check("append")

	// An older commit pruned: appends go on (they look at the head
	// only); Heal mends it.
	for i := 0; i < 3; i++ {
		acked = append(acked, a.note(t, "m").ID)
	}
	l := a.ledger(t)
	head, _ := l.Head()
	cm, _ := l.Store.ReadCommit(head)
	p := cm.Parents[0].String()
	os.Remove(filepath.Join(a.common(), "objects", p[:2], p[2:]))
	if whole, _ := l.HistoryWhole(); whole {
		t.Fatal("history whole after removing a commit")
	}
	hr, err := l.Heal()
	if err != nil || !hr.Healed {
		t.Fatalf("heal: %+v %v", hr, err)
	}
	check("heal")
	if hr, err := a.ledger(t).Heal(); err != nil || hr.Healed {
		t.Fatalf("a second heal of a whole ledger: %+v %v", hr, err)
	}
}

// HistoryWhole (doctor's: the head's trees read and its blobs asked of
// cat-file, then each commit's difference from its child) finds what
// `git rev-list --objects` finds: with any one object of the history
// removed (a commit, a tree only an old commit holds, a fact blob, a
// segment blob), neither calls it whole; with all there, both do.
func TestHistoryWholeAgreesWithRevList(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	_, cs := network(t, 1, &now)
	a := cs[0]
	for i := 0; i < 300; i++ {
		a.note(t, fmt.Sprintf("n %d", i)) // more than a segment: a segment blob
	}
	l := a.ledger(t)
	head, _ := l.Head()
	if whole, err := l.HistoryWhole(); err != nil || !whole || !l.whole(head) {
		t.Fatalf("a whole history: %v %v %v", whole, err, l.whole(head))
	}
	lines := strings.Split(strings.TrimSpace(git(t, a.dir, "rev-list", "--objects", head.String())), "\n")
	kinds, seen := map[string]int{}, map[string]int{}
	for _, line := range lines {
		id, path, _ := strings.Cut(line, " ")
		kind := strings.TrimSpace(git(t, a.dir, "cat-file", "-t", id))
		if strings.HasSuffix(path, segBlobExt) {
			kind = "segment blob"
		}
		// The first of each kind, then one in 40.
		if seen[kind]++; seen[kind]%40 != 1 {
			continue
		}
		kinds[kind]++
		p := filepath.Join(a.common(), "objects", id[:2], id[2:])
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("%s %s is not loose: %v", kind, id, err)
		}
		os.Remove(p)
		whole, err := l.HistoryWhole()
		if err != nil || whole || l.whole(head) {
			t.Errorf("%s %s (%s) removed: HistoryWhole %v %v, rev-list whole %v", kind, id, path, whole, err, l.whole(head))
		}
		if err := os.WriteFile(p, b, 0o444); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("removed in turn: %v", kinds)
	if kinds["commit"] == 0 || kinds["tree"] == 0 || kinds["blob"] == 0 || kinds["segment blob"] == 0 {
		t.Fatalf("not every kind of object removed: %v", kinds)
	}
}
