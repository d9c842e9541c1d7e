package ledger

import (
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"testing"

	"github.com/git-rally/git-rally/facts"
)

// The incremental projection equals the projection from scratch, whatever
// the facts: the cache must never change an answer.
func TestIncrementalEqualsBuild(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	tools := []string{"a", "b", "c"}
	scopes := []string{"file:x", "file:y", "dir:d", "file:d/e", "port:80"}
	cacheDir := t.TempDir()
	for trial := 0; trial < 200; trial++ {
		var all []*facts.Fact
		for i := 1; i <= 30; i++ {
			tool := tools[rng.Intn(len(tools))]
			var f facts.Fact
			switch rng.Intn(11) {
			case 0:
				f = facts.Fact{Kind: facts.KindPresence, Tool: tool}
			case 1, 2:
				f = facts.Fact{Kind: facts.KindClaim, Tool: tool, Scopes: []string{scopes[rng.Intn(len(scopes))]}, LeaseS: 1800}
				if rng.Intn(2) == 0 {
					f.Ref = pick(rng, all, facts.KindClaim) // a re-claim
				}
			case 3:
				f = facts.Fact{Kind: facts.KindRelease, Tool: tool, Ref: pick(rng, all, facts.KindClaim)}
			case 4:
				f = facts.Fact{Kind: facts.KindHandoff, Tool: tool, Target: tools[rng.Intn(len(tools))], Subject: "h"}
			case 5:
				f = facts.Fact{Kind: []string{facts.KindReceipt, facts.KindResolve, facts.KindArtifact}[rng.Intn(3)], Tool: tool, Ref: pick(rng, all, facts.KindHandoff)}
			case 6:
				if ref := pick(rng, all, ""); ref != "" {
					f = facts.Fact{Kind: facts.KindRetract, Tool: authorOf(all, ref), Ref: ref}
				} else {
					f = facts.Fact{Kind: facts.KindNote, Tool: tool}
				}
			case 7:
				f = facts.Fact{Kind: facts.KindLeave, Tool: tool}
			case 8:
				// the lead seat: assigned, handed over, emptied
				f = facts.Fact{Kind: facts.KindLead, Tool: tool, Target: []string{"", "a", "b"}[rng.Intn(3)]}
			case 9:
				// a rejection, or a handoff that reassigns one
				if rng.Intn(2) == 0 {
					f = facts.Fact{Kind: facts.KindReceipt, Tool: tool, Ref: pick(rng, all, facts.KindHandoff), Status: facts.Rejected, Reason: "no"}
				} else {
					f = facts.Fact{Kind: facts.KindHandoff, Tool: tool, Target: tools[rng.Intn(len(tools))], Ref: pick(rng, all, facts.KindHandoff), Subject: "again"}
				}
			default:
				if rng.Intn(2) == 0 {
					f = facts.Fact{Kind: facts.KindRisk, Tool: tool, Subject: "r"}
				} else {
					f = facts.Fact{Kind: facts.KindBlocker, Tool: tool, Scopes: [][]string{{"dir:d"}, nil}[rng.Intn(2)], Subject: "b"}
				}
			}
			gap := []int{10, 3000, 30000}[trial%3] // long enough to forget peers, then risks

			all = append(all, mk(int64(i), i*gap, f))
		}
		want := facts.Build(append([]*facts.Fact(nil), all...))
		inc := facts.NewState()
		for i := 0; i < len(all); {
			n := 1 + rng.Intn(4)
			if i+n > len(all) {
				n = len(all) - i
			}
			cp := inc.Clone()
			if err := cp.Apply(append([]*facts.Fact(nil), all[i:i+n]...)); err != nil {
				cp = facts.Build(append([]*facts.Fact(nil), all[:i+n]...))
			}
			inc = cp
			i += n
			if rng.Intn(2) == 0 {
				// Through the cache file, as the next command reads it:
				// the handoffs stay encoded until something looks at them.
				inc = cacheRoundTrip(t, cacheDir, inc)
			}
		}
		now := at(30 * 30000)
		if !reflect.DeepEqual(roomKey(want.Room(now)), roomKey(inc.Room(now))) {
			for _, f := range all {
				t.Logf("%s %s %s tool=%s target=%s ref=%s status=%s", f.ID, f.Kind, f.At, f.Tool, f.Target, f.Ref, f.Status)
			}
			t.Fatalf("trial %d: incremental room differs\nbuild: %v\ninc:   %v", trial, roomKey(want.Room(now)), roomKey(inc.Room(now)))
		}
	}
}

var roundTrips int

// cacheRoundTrip saves st in a cache under dir and loads it back, as the
// next command would.
func cacheRoundTrip(t *testing.T, dir string, st *facts.State) *facts.State {
	t.Helper()
	// Now and then every change of the claims makes a claims file, so the
	// next steps apply to claims read from one.
	defer func(n int) { compactAt = n }(compactAt)
	roundTrips++
	compactAt = []int{0, 1, 3, 32}[roundTrips%4]
	newCache(dir).save(st, nil, true)
	got := newCache(dir).load()
	if got == nil {
		t.Fatal("the saved cache does not load")
	}
	if got.Pending() == nil {
		t.Fatal("handoffs decoded on load")
	}
	return got
}

// planKey renders what the projection holds of plans.
func planKey(s *facts.State) string {
	var ids []string
	for id := range s.Plans {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := ""
	for _, id := range ids {
		p := s.Plans[id]
		var ts []string
		for t, r := range p.Reports {
			ts = append(ts, t+"="+r.ID)
		}
		sort.Strings(ts)
		closed := ""
		if p.Closed != nil {
			closed = p.Closed.ID
		}
		out += fmt.Sprintf("%s:%s reports=%v closed=%s; ", id, p.ID(), ts, closed)
	}
	return out
}

// Plans projected step by step (through the cache file) equal plans
// projected at once, retractions and releases included.
func TestPlanIncrementalEqualsBuild(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	tools := []string{"lead", "a", "b"}
	tasks := []string{"t1", "t2"}
	cacheDir := t.TempDir()
	for trial := 0; trial < 200; trial++ {
		var all []*facts.Fact
		var plans []string
		for i := 1; i <= 30; i++ {
			tool := tools[rng.Intn(len(tools))]
			task := tasks[rng.Intn(len(tasks))]
			var f facts.Fact
			switch rng.Intn(7) {
			case 0:
				f = facts.Fact{Kind: facts.KindPlan, Tool: tool, Subject: []string{"p", "p", "q"}[rng.Intn(3)], Body: `{}`}
			case 1, 2:
				f = facts.Fact{Kind: facts.KindClaim, Tool: tool, Scopes: []string{facts.TaskScope("p", task)}, LeaseS: 7200}
			case 3:
				f = facts.Fact{Kind: facts.KindRelease, Tool: tool, Ref: pick(rng, all, facts.KindClaim)}
			case 4:
				if c := pick(rng, all, facts.KindClaim); c != "" {
					tool = authorOf(all, c) // most reports come from a taker
				}
				f = facts.Fact{Kind: facts.KindArtifact, Tool: tool, Ref: pickStr(rng, plans), Scopes: []string{facts.TaskScope("p", task)}, Evidence: []string{"ok"}}
			case 5:
				f = facts.Fact{Kind: facts.KindResolve, Tool: tool, Ref: pickStr(rng, plans)}
			default:
				if ref := pick(rng, all, ""); ref != "" {
					f = facts.Fact{Kind: facts.KindRetract, Tool: authorOf(all, ref), Ref: ref}
				} else {
					f = facts.Fact{Kind: facts.KindNote, Tool: tool}
				}
			}
			gap := []int{10, 30000, 100000}[trial%3]
			fact := mk(int64(i), i*gap, f)
			if fact.Kind == facts.KindPlan {
				plans = append(plans, fact.ID)
			}
			all = append(all, fact)
		}
		want := facts.Build(append([]*facts.Fact(nil), all...))
		inc := facts.NewState()
		for i := 0; i < len(all); {
			n := 1 + rng.Intn(4)
			if i+n > len(all) {
				n = len(all) - i
			}
			cp := inc.Clone()
			if err := cp.Apply(append([]*facts.Fact(nil), all[i:i+n]...)); err != nil {
				cp = facts.Build(append([]*facts.Fact(nil), all[:i+n]...))
			}
			inc = cp
			i += n
			if rng.Intn(2) == 0 {
				inc = cacheRoundTrip(t, cacheDir, inc)
			}
		}
		if planKey(want) != planKey(inc) {
			t.Fatalf("trial %d: incremental plans differ\nbuild: %s\ninc:   %s", trial, planKey(want), planKey(inc))
		}
	}
}

func pickStr(rng *rand.Rand, ss []string) string {
	if len(ss) == 0 {
		return ""
	}
	return ss[rng.Intn(len(ss))]
}
