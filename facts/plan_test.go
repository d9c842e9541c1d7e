package facts

import (
	"testing"
)

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
