package ledger

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/git-rally/git-rally/facts"
)

// Any interleaving of appends and syncs across three clones ends, once
// everyone has synced, with the same facts and the same room everywhere,
// and exactly one live claim-contested risk per contested claim.
func TestSyncRandomInterleavings(t *testing.T) {
	for _, seed := range []int64{1, 2, 3} {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
			_, cs := network(t, 3, &now)
			files := []string{"file:a.go", "file:b.go", "dir:src", "file:src/c.go"}
			for op := 0; op < 30; op++ {
				now = now.Add(time.Duration(1+rng.Intn(90)) * time.Second)
				c := cs[rng.Intn(len(cs))]
				switch r := rng.Intn(100); {
				case r < 35:
					c.note(t, fmt.Sprintf("op %d", op))
				case r < 60:
					c.claim(t, "t:"+c.name, files[rng.Intn(len(files))])
				case r < 65:
					owner := facts.Owner{Tool: "t:" + c.name}
					if len(c.state(t).OwnedClaims(owner)) > 0 {
						if _, err := c.ledger(t).Append(func(st *facts.State, now time.Time) ([]*facts.Fact, error) {
							return []*facts.Fact{{Kind: facts.KindLeave, Tool: owner.Tool}}, nil
						}); err != nil {
							t.Fatal(err)
						}
					}
				default:
					c.sync(t, rng.Intn(5) > 0)
				}
			}
			converge(t, cs)
		})
	}
}

// converge syncs every clone (the last one then holds the union and has
// pushed it) and all but the last again, then checks that all agree.
func converge(t *testing.T, cs []*clone) {
	t.Helper()
	for _, c := range cs {
		c.sync(t, true)
	}
	for _, c := range cs[:len(cs)-1] {
		if r := c.sync(t, true); r.Pushed || len(r.Risks) > 0 {
			t.Fatalf("%s still had something to push after the round: %+v", c.name, r)
		}
	}
	want := cs[0].ids(t)
	wantRoom := roomJSON(t, cs[0])
	for _, c := range cs[1:] {
		if got := c.ids(t); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s has %d facts, %s has %d:\n%v\n%v", c.name, len(got), cs[0].name, len(want), got, want)
		}
		if got := roomJSON(t, c); got != wantRoom {
			t.Fatalf("rooms differ:\n%s\n%s", got, wantRoom)
		}
	}
	st := cs[0].state(t)
	live := map[string]int{}
	for _, r := range st.Risks {
		if strings.HasPrefix(r.Subject, facts.ContestedSubject) {
			live[r.Ref]++
		}
	}
	contested := map[string]bool{}
	for _, c := range st.Contests() {
		contested[c.Claim.ID] = true
		if live[c.Claim.ID] != 1 {
			t.Errorf("contested claim %s has %d live claim-contested risks, want 1", c.Claim.ID, live[c.Claim.ID])
		}
	}
	for ref, n := range live {
		if n > 1 {
			t.Errorf("claim %s has %d live claim-contested risks", ref, n)
		}
	}
}

func roomJSON(t *testing.T, c *clone) string {
	t.Helper()
	r := c.state(t).Room(*c.now)
	r.Head = ""
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Appends and syncs running at once in three clones (each with its own
// writers) lose nothing: every acknowledged fact is everywhere at the end.
func TestSyncConcurrent(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	_, cs := network(t, 3, &now)
	var mu sync.Mutex
	acked := map[string]bool{}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for _, c := range cs {
		for w := 0; w < 2; w++ {
			wg.Add(1)
			go func(c *clone, w int) {
				defer wg.Done()
				for i := 0; i < 6; i++ {
					l, err := Open(c.common(), func() time.Time { return now })
					if err != nil {
						errs <- err
						return
					}
					if w == 0 && i%2 == 1 {
						_, err = l.Sync(SyncOptions{Remote: "origin", Dir: c.dir, Push: true})
					} else {
						var fs []*facts.Fact
						fs, err = l.Append(facts.Simple(&facts.Fact{Kind: facts.KindNote, Tool: "t:" + c.name, Subject: fmt.Sprintf("w%d i%d", w, i)}))
						if err == nil {
							mu.Lock()
							acked[fs[0].ID] = true
							mu.Unlock()
						}
					}
					l.Close()
					if err != nil {
						errs <- fmt.Errorf("%s: %w", c.name, err)
						return
					}
				}
			}(c, w)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	converge(t, cs)
	have := map[string]bool{}
	for _, id := range cs[0].ids(t) {
		have[id] = true
	}
	for id := range acked {
		if !have[id] {
			t.Errorf("acknowledged fact %s was lost", id)
		}
	}
}

// Two clones claim one file while apart: whichever order they sync in,
// the lower (clock, id) holds, the other is contested in every clone, and
// exactly one risk records it, written by the clone that merged first.
func TestSyncContestOnce(t *testing.T) {
	for _, first := range []int{0, 1} {
		t.Run(fmt.Sprint("first", first), func(t *testing.T) {
			now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
			_, cs := network(t, 2, &now)
			a := cs[0].claim(t, "t:a", "file:x.go")
			b := cs[1].claim(t, "t:b", "file:x.go")
			holder, loser := a, b
			if b.Key().Less(a.Key()) {
				holder, loser = b, a
			}
			p, q := cs[first], cs[1-first]
			if r := p.sync(t, true); len(r.Risks) != 0 {
				t.Fatalf("first sync saw a contest alone")
			}
			// The clone whose claim lost records the contest: at this
			// merge when it is the merging one, else at its next sync.
			loserClone := cs[0]
			if loser == b {
				loserClone = cs[1]
			}
			r := q.sync(t, true)
			if r.Merge != MergeCommit {
				t.Fatalf("second sync: merge %s", r.Merge)
			}
			if q != loserClone {
				if len(r.Risks) != 0 {
					t.Fatalf("the holder's clone recorded the contest: %v", r.Risks)
				}
				r = p.sync(t, true)
			}
			if len(r.Risks) != 1 || r.Risks[0].Ref != loser.ID {
				t.Fatalf("the contested claim's clone: risks %v, want one for %s", r.Risks, loser.ID)
			}
			for i := 0; i < 2; i++ {
				for _, c := range []*clone{p, q} {
					if r := c.sync(t, true); len(r.Risks) != 0 {
						t.Fatalf("%s wrote another risk", c.name)
					}
				}
			}
			for _, c := range cs {
				ct := c.state(t).Contests()
				if len(ct) != 1 || ct[0].Claim.ID != loser.ID || ct[0].Holder.ID != holder.ID || ct[0].Risk == "" {
					t.Fatalf("%s contests: %+v", c.name, ct)
				}
				risks := 0
				all, _ := c.ledger(t).All()
				for _, f := range all {
					if f.Kind == facts.KindRisk {
						risks++
					}
				}
				if risks != 1 {
					t.Fatalf("%s holds %d risks", c.name, risks)
				}
				next := c.state(t).Next(loser.Owner(), now)
				if next.Suggestions[0].Action != "release_contested_claim" || next.Suggestions[0].Ref != loser.ID {
					t.Fatalf("next for the contested owner: %+v", next.Suggestions)
				}
			}
		})
	}
}

// Two clones meet the same contest before either has pushed: neither
// records it, for the contested claim is another clone's; that clone
// records it once when it merges, and nothing is retracted anywhere.
func TestSyncContestRecordedByTheContestedClone(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	_, cs := network(t, 3, &now)
	x, y, z := cs[0], cs[1], cs[2]
	// x's claim is published; y and z claim the same file while apart and
	// with lower clocks, so x's claim is the contested one in both.
	for i := 0; i < 3; i++ {
		x.note(t, "busy")
	}
	cx := x.claim(t, "t:x", "file:x.go")
	x.sync(t, true)
	y.claim(t, "t:y", "dir:src")
	z.claim(t, "t:z", "dir:lib")
	y.claim(t, "t:y", "file:x.go")
	z.claim(t, "t:z", "file:x.go")
	for _, r := range []*SyncResult{y.sync(t, false), z.sync(t, true), y.sync(t, true)} {
		for _, rk := range r.Risks {
			if rk.Ref == cx.ID {
				t.Fatalf("a clone holding against x's claim recorded its contest: %v", rk)
			}
		}
		if len(r.Retracted) != 0 {
			t.Fatalf("retracted %v", r.Retracted)
		}
	}
	r := x.sync(t, true)
	if len(r.Risks) != 1 || r.Risks[0].Ref != cx.ID || len(r.Retracted) != 0 {
		t.Fatalf("x: risks %v, retracted %v, want one risk for %s", r.Risks, r.Retracted, cx.ID)
	}
	converge(t, cs)
	if contests, written, live := contestFigures(t, x); contests != 2 || written != 2 || live != 2 {
		t.Fatalf("contests %d, risks written %d, live %d: want 2 each (x's claim and the later of y's and z's)", contests, written, live)
	}
}

// A remote whose ledger was rewritten to an older commit, or deleted, is
// reported and healed by a plain (not forced) push of the union.
func TestSyncRewrittenRemote(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	remote, cs := network(t, 2, &now)
	a, b := cs[0], cs[1]
	a.note(t, "one")
	a.sync(t, true)
	old := strings.TrimSpace(git(t, remote, "rev-parse", LedgerRef))
	a.note(t, "two")
	a.note(t, "three")
	a.sync(t, true)
	b.sync(t, true)

	git(t, remote, "update-ref", LedgerRef, old)
	r := b.sync(t, true)
	if !r.Rewritten || r.Missing != 2 || !r.Pushed {
		t.Fatalf("rewritten: %+v", r)
	}
	if r := a.sync(t, true); r.Rewritten || r.NewFacts != 0 {
		t.Fatalf("a after the heal: %+v", r)
	}

	git(t, remote, "update-ref", "-d", LedgerRef)
	r = a.sync(t, true)
	if !r.Rewritten || r.Missing != 3 || !r.Pushed || r.Fetched {
		t.Fatalf("deleted: %+v", r)
	}
	converge(t, cs)
	if n := len(cs[1].ids(t)); n != 3 {
		t.Fatalf("%d facts after the heal, want 3", n)
	}
}

// The remote moves between this clone's fetch and its push (a pre-receive
// hook plays the other clone): the push is refused, and sync fetches,
// merges and pushes again.
func TestSyncRetriesWhenTheRemoteMoves(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	remote, cs := network(t, 2, &now)
	a, b := cs[0], cs[1]
	b.note(t, "from b")
	git(t, b.dir, "push", "-q", "origin", LedgerRef+":refs/staged/b")
	hook := "#!/bin/sh\n" +
		"if [ ! -e moved ]; then touch moved; env -u GIT_QUARANTINE_PATH git update-ref " + LedgerRef + " refs/staged/b; fi\n"
	if err := os.WriteFile(filepath.Join(remote, "hooks", "pre-receive"), []byte(hook), 0o777); err != nil {
		t.Fatal(err)
	}
	a.note(t, "from a")
	r := a.sync(t, true)
	if r.Rounds != 2 || !r.Pushed || r.Merge != MergeCommit || r.NewFacts != 1 {
		t.Fatalf("sync: %+v", r)
	}
	b.sync(t, true)
	converge(t, cs)
	if n := len(b.ids(t)); n != 2 {
		t.Fatalf("%d facts, want 2", n)
	}
}
