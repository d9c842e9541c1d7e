package facts

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"
)

// planKey renders what the projection holds of plans.
func planKey(s *State) string {
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

func TestPlanReportsCountOnlyFromTheTaker(t *testing.T) {
	plan := mk(1, 0, Fact{Kind: KindPlan, Tool: "lead", Subject: "p", Body: `{"id":"p","tasks":[]}`})
	take := mk(2, 1, Fact{Kind: KindClaim, Tool: "a", Scopes: []string{"dir:src", TaskScope("p", "t")}, LeaseS: 7200})
	cases := []struct {
		name   string
		f      Fact
		counts bool
	}{
		{"the taker with evidence", Fact{Kind: KindArtifact, Tool: "a", Ref: plan.ID, Scopes: []string{TaskScope("p", "t")}, Evidence: []string{"ok"}}, true},
		{"the taker in another session", Fact{Kind: KindArtifact, Tool: "a", Session: "s2", Ref: plan.ID, Scopes: []string{TaskScope("p", "t")}, Evidence: []string{"ok"}}, false},
		{"someone else", Fact{Kind: KindArtifact, Tool: "b", Ref: plan.ID, Scopes: []string{TaskScope("p", "t")}, Evidence: []string{"ok"}}, false},
		{"no evidence", Fact{Kind: KindArtifact, Tool: "a", Ref: plan.ID, Scopes: []string{TaskScope("p", "t")}}, false},
		{"no task", Fact{Kind: KindArtifact, Tool: "a", Ref: plan.ID, Evidence: []string{"ok"}}, false},
		{"another plan's task", Fact{Kind: KindArtifact, Tool: "a", Ref: plan.ID, Scopes: []string{TaskScope("q", "t")}, Evidence: []string{"ok"}}, false},
		{"a note", Fact{Kind: KindNote, Tool: "a", Ref: plan.ID, Scopes: []string{TaskScope("p", "t")}, Subject: "done"}, false},
	}
	for _, c := range cases {
		st := Build([]*Fact{plan, take, mk(3, 2, c.f)})
		if got := st.Plans[plan.ID].Reports["t"] != nil; got != c.counts {
			t.Errorf("%s: counts %v, want %v", c.name, got, c.counts)
		}
	}
	// A released claim is not a report, and a report after the release
	// does not count either: the taker no longer holds the task.
	rel := mk(3, 2, Fact{Kind: KindRelease, Tool: "a", Ref: take.ID})
	late := mk(4, 3, Fact{Kind: KindArtifact, Tool: "a", Ref: plan.ID, Scopes: []string{TaskScope("p", "t")}, Evidence: []string{"ok"}})
	if st := Build([]*Fact{plan, take, rel, late}); len(st.Plans[plan.ID].Reports) != 0 {
		t.Errorf("a report after the release counts")
	}
}

func TestPlanCloseAndForget(t *testing.T) {
	plan := mk(1, 0, Fact{Kind: KindPlan, Tool: "lead", Subject: "p", Body: `{}`})
	other := mk(2, 1, Fact{Kind: KindResolve, Tool: "b", Ref: plan.ID, Subject: "p"})
	byLead := mk(3, 2, Fact{Kind: KindResolve, Tool: "lead", Ref: plan.ID, Subject: "p"})
	st := Build([]*Fact{plan, other})
	if st.OpenPlan("p") == nil {
		t.Fatal("a resolve by someone other than the lead closed the plan")
	}
	st = Build([]*Fact{plan, other, byLead})
	if st.OpenPlan("p") != nil || st.LatestPlan("p") == nil || st.LatestPlan("p").Closed.ID != byLead.ID {
		t.Fatal("the lead's resolve did not close the plan")
	}
	// Eight days later the closed plan is forgotten; an open one is not.
	open := mk(4, 3, Fact{Kind: KindPlan, Tool: "lead", Subject: "q", Body: `{}`})
	later := mk(5, 8*24*3600, Fact{Kind: KindNote, Tool: "x"})
	st = Build([]*Fact{plan, byLead, open, later})
	if st.LatestPlan("p") != nil {
		t.Error("a plan closed 8 days ago is still held")
	}
	if st.OpenPlan("q") == nil {
		t.Error("an open plan was forgotten")
	}
}

// Plans projected step by step (through the cache file) equal plans
// projected at once, retractions and releases included.
func TestPlanIncrementalEqualsBuild(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	tools := []string{"lead", "a", "b"}
	tasks := []string{"t1", "t2"}
	cacheDir := t.TempDir()
	for trial := 0; trial < 200; trial++ {
		var all []*Fact
		var plans []string
		for i := 1; i <= 30; i++ {
			tool := tools[rng.Intn(len(tools))]
			task := tasks[rng.Intn(len(tasks))]
			var f Fact
			switch rng.Intn(7) {
			case 0:
				f = Fact{Kind: KindPlan, Tool: tool, Subject: []string{"p", "p", "q"}[rng.Intn(3)], Body: `{}`}
			case 1, 2:
				f = Fact{Kind: KindClaim, Tool: tool, Scopes: []string{TaskScope("p", task)}, LeaseS: 7200}
			case 3:
				f = Fact{Kind: KindRelease, Tool: tool, Ref: pick(rng, all, KindClaim)}
			case 4:
				if c := pick(rng, all, KindClaim); c != "" {
					tool = authorOf(all, c) // most reports come from a taker
				}
				f = Fact{Kind: KindArtifact, Tool: tool, Ref: pickStr(rng, plans), Scopes: []string{TaskScope("p", task)}, Evidence: []string{"ok"}}
			case 5:
				f = Fact{Kind: KindResolve, Tool: tool, Ref: pickStr(rng, plans)}
			default:
				if ref := pick(rng, all, ""); ref != "" {
					f = Fact{Kind: KindRetract, Tool: authorOf(all, ref), Ref: ref}
				} else {
					f = Fact{Kind: KindNote, Tool: tool}
				}
			}
			gap := []int{10, 30000, 100000}[trial%3]
			fact := mk(int64(i), i*gap, f)
			if fact.Kind == KindPlan {
				plans = append(plans, fact.ID)
			}
			all = append(all, fact)
		}
		want := Build(append([]*Fact(nil), all...))
		inc := NewState()
		for i := 0; i < len(all); {
			n := 1 + rng.Intn(4)
			if i+n > len(all) {
				n = len(all) - i
			}
			cp := inc.clone()
			if err := cp.Apply(append([]*Fact(nil), all[i:i+n]...)); err != nil {
				cp = Build(append([]*Fact(nil), all[:i+n]...))
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
