package facts

import (
	"errors"
	"strings"
	"testing"
)

// run applies an AppendFunc to the state of fs at t0+sec and, when it
// writes, seals its facts after fs.
func run(t *testing.T, fs []*Fact, sec int, fn AppendFunc) ([]*Fact, error) {
	t.Helper()
	out, err := fn(Build(append([]*Fact(nil), fs...)), at(sec))
	if err != nil {
		return nil, err
	}
	var sealed []*Fact
	for i, f := range out {
		sealed = append(sealed, mk(int64(len(fs)+i+1), sec, *f))
	}
	return sealed, nil
}

func refusedCode(err error) string {
	var re *RefusedError
	if errors.As(err, &re) {
		return re.Code
	}
	return ""
}

func TestLeadSeatRules(t *testing.T) {
	a, b, c := Owner{Tool: "a"}, Owner{Tool: "b"}, Owner{Tool: "c"}
	var fs []*Fact
	step := func(sec int, fn AppendFunc) error {
		t.Helper()
		out, err := run(t, fs, sec, fn)
		fs = append(fs, out...)
		return err
	}
	holder := func() string { return Build(append([]*Fact(nil), fs...)).LeadHolder() }

	// An empty seat goes to the first assign, whoever asks.
	if err := step(0, LeadAssignTo(b, "a", false)); err != nil || holder() != "a" {
		t.Fatalf("first assign: %v, lead %q", err, holder())
	}
	if fs[0].Tool != "b" || fs[0].Target != "a" {
		t.Fatalf("a lead fact's tool is the actor, its target the lead: %+v", fs[0])
	}
	// Anyone else's assign is refused, naming the holder, and writes nothing.
	n := len(fs)
	err := step(10, LeadAssignTo(c, "c", false))
	if refusedCode(err) != "lead-held" || !strings.Contains(err.Error(), "held by a") || len(fs) != n {
		t.Fatalf("a non-holder's assign: %v (wrote %d)", err, len(fs)-n)
	}
	if err := step(10, LeadHandoffTo(c, "c")); refusedCode(err) != "lead-held" {
		t.Fatalf("a non-holder's handoff: %v", err)
	}
	if err := step(10, LeadRelinquishBy(c)); refusedCode(err) != "lead-held" || len(fs) != n {
		t.Fatalf("a non-holder's relinquish: %v", err)
	}
	// The holder moves it.
	if err := step(20, LeadHandoffTo(a, "b")); err != nil || holder() != "b" {
		t.Fatalf("holder's handoff: %v, lead %q", err, holder())
	}
	// --force seizes it and records whom it displaced.
	if err := step(30, LeadAssignTo(c, "c", true)); err != nil || holder() != "c" {
		t.Fatalf("forced assign: %v, lead %q", err, holder())
	}
	if last := fs[len(fs)-1]; last.Reason != LeadSeize || len(last.Evidence) != 1 || last.Evidence[0] != "displaced:b" {
		t.Fatalf("seizure fact: %+v", last)
	}
	// Assigning the holder again, relinquishing an empty seat: no change.
	var nc *NoChange
	if err := step(40, LeadAssignTo(c, "c", false)); !errors.As(err, &nc) {
		t.Fatalf("re-assign of the holder: %v", err)
	}
	if err := step(50, LeadRelinquishBy(c)); err != nil || holder() != "" {
		t.Fatalf("relinquish: %v, lead %q", err, holder())
	}
	if err := step(60, LeadRelinquishBy(c)); !errors.As(err, &nc) {
		t.Fatalf("relinquish of an empty seat: %v", err)
	}
	if err := step(60, LeadHandoffTo(c, "a")); refusedCode(err) != "not-lead" {
		t.Fatalf("handoff of an empty seat: %v", err)
	}
	var ue *UsageError
	for _, to := range []string{"", "all", "rally", "bad tool"} {
		if err := step(70, LeadAssignTo(a, to, false)); !errors.As(err, &ue) {
			t.Errorf("assign --to %q: %v, want a usage error", to, err)
		}
	}
	// A lead fact is moved, never retracted.
	if _, err := Retract(c, fs[len(fs)-1], "oops")(Build(fs), at(80)); !errors.As(err, &ue) {
		t.Fatalf("retract of a lead fact: %v", err)
	}
}

func TestReaperRelinquishesASilentLead(t *testing.T) {
	fs := []*Fact{
		mk(1, 0, Fact{Kind: KindLead, Tool: "a", Target: "a", Reason: LeadAssign}),
		mk(2, 600, Fact{Kind: KindNote, Tool: "a", Session: "s1", Subject: "still here"}),
	}
	st := Build(fs)
	silent := func(sec int) bool {
		for _, it := range st.ReapCandidates(at(sec)) {
			if it.Kind == "lead" {
				return true
			}
		}
		return false
	}
	// Silent exactly 2h since its latest fact (in any session): kept.
	if silent(600 + 7200) {
		t.Fatal("a lead silent exactly 2h was reaped")
	}
	if !silent(600 + 7201) {
		t.Fatal("a lead silent more than 2h was not reaped")
	}
	out, err := Reap()(st, at(600+7201))
	if err != nil || len(out) != 1 || out[0].Kind != KindLead || out[0].Target != "" || out[0].Tool != SystemTool ||
		out[0].Evidence[0] != "reaper:stale-lead=a" {
		t.Fatalf("reap: %v %+v", err, out)
	}
	if h := Build(append(fs, mk(3, 600+7201, *out[0]))).LeadHolder(); h != "" {
		t.Fatalf("after the reaper, lead %q", h)
	}
	// A lead given the seat by another and silent since: counted from
	// the fact that gave it the seat.
	st = Build([]*Fact{mk(1, 0, Fact{Kind: KindNote, Tool: "b"}), mk(2, 3600, Fact{Kind: KindLead, Tool: "b", Target: "z"})})
	if silent(3600 + 7200) {
		t.Fatal("reaped before 2h after the assignment")
	}
	if !silent(3600 + 7201) {
		t.Fatal("not reaped 2h after the assignment")
	}
}

func TestFreezeStopsEveryoneButTheLead(t *testing.T) {
	lead := mk(1, 0, Fact{Kind: KindLead, Tool: "a", Target: "a"})
	freeze := mk(2, 10, Fact{Kind: KindBlocker, Tool: "a", Subject: "release 1.2"})
	other := mk(3, 20, Fact{Kind: KindBlocker, Tool: "b", Subject: "my build is red"})
	ws := mk(4, 30, Fact{Kind: KindBlocker, Tool: "a", Scopes: []string{"workspace:*"}, Subject: "all of it"})
	codes := func(st *State, me string) (bool, map[string]string) {
		r := st.CheckBeforeWrite(Owner{Tool: me}, []string{"src/x.go"}, at(60))
		m := map[string]string{}
		for _, f := range r.Findings {
			m[f.Code+":"+f.Claim] = f.Severity
		}
		return r.Allow, m
	}
	st := Build([]*Fact{lead, freeze, other})
	allow, m := codes(st, "b")
	if allow || m[RoomFreeze+":"+freeze.ID] != SevStop || m[UnscopedBlocker+":"+other.ID] != SevWarn {
		t.Fatalf("b during a's freeze: allow=%v %v", allow, m)
	}
	r := st.CheckBeforeWrite(Owner{Tool: "b"}, []string{"src/x.go"}, at(60))
	for _, f := range r.Findings {
		if f.Code == RoomFreeze && (!strings.Contains(f.Message, "lead a") || !strings.Contains(f.Message, "git rally resolve "+freeze.ID)) {
			t.Fatalf("freeze message says neither who nor how: %s", f.Message)
		}
	}
	if allow, m := codes(st, "a"); !allow || m[UnscopedBlocker+":"+freeze.ID] != SevWarn || m[RoomFreeze+":"+freeze.ID] != "" {
		t.Fatalf("the lead during its own freeze: allow=%v %v", allow, m)
	}
	// Without the seat the same blocker only warns.
	st = Build([]*Fact{freeze, other})
	if allow, m := codes(st, "b"); !allow || m[UnscopedBlocker+":"+freeze.ID] != SevWarn {
		t.Fatalf("no lead: allow=%v %v", allow, m)
	}
	// workspace:* is unscoped too.
	st = Build([]*Fact{lead, ws})
	if allow, m := codes(st, "c"); allow || m[RoomFreeze+":"+ws.ID] != SevStop {
		t.Fatalf("workspace:* freeze: allow=%v %v", allow, m)
	}
	// Only the lead lifts it; a lift by the lead unfreezes.
	st = Build([]*Fact{lead, freeze})
	if _, err := Answer(&Fact{Kind: KindResolve, Tool: "b", Ref: freeze.ID}, freeze)(st, at(70)); refusedCode(err) != "not-lead" {
		t.Fatalf("b lifts a's freeze: %v", err)
	}
	if _, err := Answer(&Fact{Kind: KindResolve, Tool: "a", Ref: freeze.ID}, freeze)(st, at(70)); err != nil {
		t.Fatalf("the lead lifts its freeze: %v", err)
	}
	lift := mk(5, 70, Fact{Kind: KindResolve, Tool: "a", Ref: freeze.ID})
	if allow, _ := codes(Build([]*Fact{lead, freeze, lift}), "b"); !allow {
		t.Fatal("still frozen after the lift")
	}
	// next: the lead is told to lift it, the others that it is frozen.
	st = Build([]*Fact{lead, freeze})
	if s := st.Next(Owner{Tool: "a"}, at(80)).Suggestions[0]; s.Action != "lift_freeze" || s.Command != "git rally resolve "+freeze.ID+" --tool a" {
		t.Fatalf("lead's next: %+v", s)
	}
	if s := st.Next(Owner{Tool: "b"}, at(80)).Suggestions[0]; s.Action != "room_frozen" {
		t.Fatalf("b's next: %+v", s)
	}
}

func TestRejectedHandoff(t *testing.T) {
	h := mk(1, 0, Fact{Kind: KindHandoff, Tool: "a", Target: "b", Subject: "port the parser"})
	claim := mk(2, 5, Fact{Kind: KindClaim, Tool: "a", Scopes: []string{"file:x"}})
	st := Build([]*Fact{h, claim})
	rej := &Fact{Kind: KindReceipt, Tool: "b", Ref: h.ID, Status: Rejected, Reason: "not my area"}
	var ue *UsageError
	// Only the target rejects; a reason is required; receipt answers handoffs only.
	if _, err := Answer(&Fact{Kind: KindReceipt, Tool: "c", Ref: h.ID, Status: Rejected, Reason: "x"}, h)(st, at(10)); refusedCode(err) != "not-target" {
		t.Fatalf("c rejects b's handoff: %v", err)
	}
	if _, err := Answer(&Fact{Kind: KindReceipt, Tool: "b", Ref: h.ID, Status: Rejected}, h)(st, at(10)); !errors.As(err, &ue) {
		t.Fatalf("reject without a reason: %v", err)
	}
	if _, err := Answer(&Fact{Kind: KindReceipt, Tool: "b", Ref: claim.ID}, claim)(st, at(10)); !errors.As(err, &ue) {
		t.Fatalf("receipt of a claim: %v, want a usage error", err)
	}
	if _, err := Answer(rej, h)(st, at(10)); err != nil {
		t.Fatalf("reject: %v", err)
	}
	r := mk(3, 10, *rej)
	st = Build([]*Fact{h, claim, r})
	if got := st.Handoffs()[h.ID].State(); got != Rejected {
		t.Fatalf("state %s, want rejected", got)
	}
	if n := len(st.Inbox([]string{"b"}, at(20))); n != 0 {
		t.Fatalf("rejected handoff still in the target's inbox (%d)", n)
	}
	s := st.Next(Owner{Tool: "a"}, at(20)).Suggestions
	if s[0].Action != "reassign_handoff" || !strings.Contains(s[0].Reason, "not my area") || !strings.Contains(s[0].Command, "--ref "+h.ID) {
		t.Fatalf("sender's next: %+v", s[0])
	}
	var nc *NoChange
	if _, err := Answer(&Fact{Kind: KindReceipt, Tool: "b", Ref: h.ID}, h)(st, at(20)); !errors.As(err, &nc) {
		t.Fatalf("receipt after the rejection: %v", err)
	}
	// Reassigning closes it; the new one is in c's inbox.
	re := mk(4, 30, Fact{Kind: KindHandoff, Tool: "a", Target: "c", Ref: h.ID, Subject: "port the parser"})
	st = Build([]*Fact{h, claim, r, re})
	if st.Handoffs()[h.ID] != nil || len(st.Inbox([]string{"c"}, at(40))) != 1 {
		t.Fatalf("after reassigning: old open %v, c's inbox %d", st.Handoffs()[h.ID] != nil, len(st.Inbox([]string{"c"}, at(40))))
	}
	// Incrementally the same, and retracting the reassignment brings the rejected one back.
	inc := Build([]*Fact{h, claim, r})
	if err := inc.Apply([]*Fact{re}); err != nil || inc.Handoffs()[h.ID] != nil {
		t.Fatalf("incremental reassign: %v", err)
	}
	undo := mk(5, 50, Fact{Kind: KindRetract, Tool: "a", Ref: re.ID, Reason: "wrong peer"})
	if err := inc.Apply([]*Fact{undo}); !errors.Is(err, ErrRebuild) {
		t.Fatalf("retracting a reassignment in place: %v, want a rebuild", err)
	}
	if st := Build([]*Fact{h, claim, r, re, undo}); st.Handoffs()[h.ID] == nil || st.Handoffs()[h.ID].State() != Rejected {
		t.Fatal("retracted reassignment did not bring the rejected handoff back")
	}
}

func TestRisksStayUntilResolved(t *testing.T) {
	risk := mk(1, 0, Fact{Kind: KindRisk, Tool: "a", Subject: "no-response: f_x"})
	blocker := mk(2, 0, Fact{Kind: KindBlocker, Tool: "a", Scopes: []string{"dir:src"}, Subject: "red"})
	later := mk(3, 40*24*3600, Fact{Kind: KindNote, Tool: "b", Subject: "a month later"})
	st := Build([]*Fact{risk, blocker, later})
	room := st.Room(at(40*24*3600 + 60))
	if len(room.Risks) != 1 || len(room.Blockers) != 1 {
		t.Fatalf("after 40 days: %d risks, %d blockers, want 1 and 1", len(room.Risks), len(room.Blockers))
	}
	inc := Build([]*Fact{risk, blocker})
	if err := inc.Apply([]*Fact{later}); err != nil || len(inc.Risks) != 1 {
		t.Fatalf("incrementally: %v, %d risks", err, len(inc.Risks))
	}
	res := mk(4, 40*24*3600+5, Fact{Kind: KindResolve, Tool: "b", Ref: risk.ID})
	if err := inc.Apply([]*Fact{res}); err != nil || len(inc.Risks) != 0 {
		t.Fatalf("resolved: %v, %d risks", err, len(inc.Risks))
	}
}

func TestRoomLeadMayCloseAnyPlan(t *testing.T) {
	plan := mk(1, 0, Fact{Kind: KindPlan, Tool: "p", Subject: "v2", Body: `{"id":"v2","tasks":[]}`})
	lead := mk(2, 5, Fact{Kind: KindLead, Tool: "l", Target: "l"})
	byOther := mk(3, 10, Fact{Kind: KindResolve, Tool: "x", Ref: plan.ID})
	if Build([]*Fact{plan, lead, byOther}).Plans[plan.ID].Closed != nil {
		t.Fatal("a peer that leads nothing closed the plan")
	}
	byLead := mk(4, 20, Fact{Kind: KindResolve, Tool: "l", Ref: plan.ID})
	if Build([]*Fact{plan, lead, byOther, byLead}).Plans[plan.ID].Closed == nil {
		t.Fatal("the room's lead could not close the plan")
	}
}

func TestWatchConcernsTheSeatAndTheFreeze(t *testing.T) {
	lead := mk(1, 0, Fact{Kind: KindLead, Tool: "a", Target: "a"})
	st := Build([]*Fact{lead})
	none := func(string) string { return "" }
	freeze := mk(2, 10, Fact{Kind: KindBlocker, Tool: "a", Subject: "release"})
	other := mk(3, 10, Fact{Kind: KindBlocker, Tool: "b", Subject: "unscoped, not the lead"})
	seize := mk(4, 20, Fact{Kind: KindLead, Tool: "c", Target: "c", Evidence: []string{"displaced:a"}})
	for _, c := range []struct {
		f    *Fact
		tool string
		want bool
	}{
		{freeze, "b", true}, {other, "c", false}, {seize, "a", true}, {seize, "b", false},
		{mk(5, 30, Fact{Kind: KindLead, Tool: "a", Target: "b"}), "b", true},
	} {
		if got := Concerns(st, c.tool, c.f, none); got != c.want {
			t.Errorf("%s %s concerns %s: %v, want %v", c.f.Kind, c.f.Subject, c.tool, got, c.want)
		}
	}
}
