package facts

import (
	"fmt"
	"strings"
	"time"
)

// The lead seat (SPEC §19). A lead fact's tool is the actor and its target
// the new lead; a fact with no target empties the seat. Reason says what
// moved it: assign, handoff, seize (assign --force, with
// "displaced:<tool>" in evidence), relinquish, or stale (the reaper).
//
// The projection takes the latest lead fact in (clock, id) order; who may
// write one is decided at append time, under the ledger lock, by
// LeadAssign, LeadHandoff and LeadRelinquish.

// LeadSilence is how long a lead may be silent before the reaper
// relinquishes the seat.
const LeadSilence = 2 * time.Hour

// Lead reasons.
const (
	LeadAssign     = "assign"
	LeadHandoff    = "handoff"
	LeadSeize      = "seize"
	LeadRelinquish = "relinquish"
	LeadStale      = "stale"
)

// LeadHolder is the tool that holds the lead seat, "" when it is empty.
func (s *State) LeadHolder() string {
	if s.Lead == nil {
		return ""
	}
	return s.Lead.Target
}

// applyLead projects a lead fact: the latest one holds.
func (s *State) applyLead(f *Fact) { s.Lead = f }

// LeadLastSeen is when the lead last showed it is alive: its latest fact
// in any session, or the fact that gave it the seat when that is later.
func (s *State) LeadLastSeen() time.Time {
	if s.Lead == nil {
		return time.Time{}
	}
	last := s.Lead.Time()
	for _, p := range s.Peers {
		if p.Tool != s.Lead.Target {
			continue
		}
		if t, err := time.Parse(time.RFC3339Nano, p.LastAt); err == nil && t.After(last) {
			last = t
		}
	}
	return last
}

// IsFreeze reports whether a blocker freezes the room: it has no scope (or
// workspace:*) and its author holds the lead seat.
func (s *State) IsFreeze(b *Fact) bool {
	return Unscoped(b) && b.Tool != "" && b.Tool == s.LeadHolder()
}

// Unscoped reports whether a blocker covers the whole room: no scope, or
// workspace:*.
func Unscoped(b *Fact) bool {
	if len(b.Scopes) == 0 {
		return true
	}
	for _, sc := range b.Scopes {
		if sc == WorkspaceScope {
			return true
		}
	}
	return false
}

// WorkspaceScope is the whole room.
const WorkspaceScope = "workspace:*"

// Freezes returns the lead's open unscoped blockers, oldest first.
func (s *State) Freezes() []*Fact {
	var out []*Fact
	for _, b := range sortedFacts(s.Blockers) {
		if s.IsFreeze(b) {
			out = append(out, b)
		}
	}
	return out
}

func leadHeld(holder, actor, verb string) *RefusedError {
	return &RefusedError{Code: "lead-held",
		Msg:  fmt.Sprintf("the lead seat is held by %s; only the holder may %s it (%s is not the lead)", holder, verb, actor),
		Hint: fmt.Sprintf("ask %s: git rally handoff --target %s --subject \"lead handoff\"; or seize it: git rally lead assign --to %s --force", holder, holder, actor)}
}

func checkLeadTarget(to string) error {
	if to == "" {
		return &UsageError{Msg: "lead needs --to <tool>", Hint: "git rally lead assign --to <tool>"}
	}
	if err := CheckTool(to); err != nil {
		return err
	}
	if to == AllTarget || to == SystemTool {
		return &UsageError{Msg: fmt.Sprintf("%q cannot hold the lead seat", to)}
	}
	return nil
}

// LeadAssignTo gives the seat to a tool: an empty seat goes to the first
// assign; a held one moves only by its holder, or by force, which records
// the displaced lead in evidence. A refusal writes nothing.
func LeadAssignTo(actor Owner, to string, force bool) AppendFunc {
	return func(st *State, now time.Time) ([]*Fact, error) {
		if err := checkLeadTarget(to); err != nil {
			return nil, err
		}
		holder := st.LeadHolder()
		f := &Fact{Kind: KindLead, Tool: actor.Tool, Session: actor.Session, Target: to, Reason: LeadAssign}
		switch {
		case holder == to:
			return nil, noChange("%s holds the lead seat already; nothing written", to)
		case holder == "":
			f.Subject = "seat assigned"
		case holder == actor.Tool:
			f.Reason, f.Subject = LeadHandoff, "seat handed over by its holder"
		case force:
			f.Reason, f.Evidence = LeadSeize, []string{"displaced:" + holder}
			f.Subject = fmt.Sprintf("seat seized (displaced %s)", holder)
		default:
			return nil, leadHeld(holder, actor.Tool, "assign")
		}
		return []*Fact{f}, nil
	}
}

// LeadHandoffTo moves the seat from its holder, the actor, to another tool.
func LeadHandoffTo(actor Owner, to string) AppendFunc {
	return func(st *State, now time.Time) ([]*Fact, error) {
		if err := checkLeadTarget(to); err != nil {
			return nil, err
		}
		holder := st.LeadHolder()
		switch {
		case holder == "":
			return nil, &RefusedError{Code: "not-lead", Msg: "the lead seat is empty; there is nothing to hand off",
				Hint: "git rally lead assign --to " + to}
		case holder != actor.Tool:
			return nil, leadHeld(holder, actor.Tool, "hand off")
		case to == holder:
			return nil, noChange("%s holds the lead seat already; nothing written", to)
		}
		return []*Fact{{Kind: KindLead, Tool: actor.Tool, Session: actor.Session, Target: to, Reason: LeadHandoff,
			Subject: "seat handed over by its holder"}}, nil
	}
}

// LeadRelinquishBy empties the seat; only its holder may.
func LeadRelinquishBy(actor Owner) AppendFunc {
	return func(st *State, now time.Time) ([]*Fact, error) {
		holder := st.LeadHolder()
		switch {
		case holder == "":
			return nil, noChange("the lead seat is empty already; nothing written")
		case holder != actor.Tool:
			return nil, leadHeld(holder, actor.Tool, "relinquish")
		}
		return []*Fact{{Kind: KindLead, Tool: actor.Tool, Session: actor.Session, Reason: LeadRelinquish,
			Subject: "seat relinquished; it is empty"}}, nil
	}
}

// staleLead is the reaper's relinquish of a lead silent more than
// LeadSilence, nil when there is none.
func (s *State) staleLead(now time.Time) *ReapItem {
	holder := s.LeadHolder()
	if holder == "" {
		return nil
	}
	last := s.LeadLastSeen()
	if now.Sub(last) <= LeadSilence {
		return nil
	}
	return &ReapItem{Kind: "lead", ID: s.Lead.ID, Owner: Owner{Tool: holder}, Reason: "stale-lead", Since: last}
}

func staleLeadFact(it ReapItem, now time.Time) *Fact {
	return &Fact{Kind: KindLead, Tool: SystemTool, Ref: it.ID, Reason: LeadStale,
		Evidence: []string{"reaper:stale-lead=" + it.Owner.Tool},
		Subject:  fmt.Sprintf("reaper: lead %s relinquished, silent %s (since %s)", it.Owner.Tool, Ago(now.Sub(it.Since)), FormatTime(it.Since))}
}

// freezeLiftRefused refuses to lift the lead's freeze for anyone but the
// lead (and the blocker's author, who is the lead).
func freezeLiftRefused(st *State, f, target *Fact) error {
	if target.Kind != KindBlocker || f.Kind != KindResolve || st.Blockers[target.ID] == nil || !st.IsFreeze(target) {
		return nil
	}
	if f.Tool == st.LeadHolder() {
		return nil
	}
	return &RefusedError{Code: "not-lead",
		Msg:  fmt.Sprintf("blocker %s freezes the room and only the lead %s may lift it (%s is not the lead)", target.ID, st.LeadHolder(), f.Tool),
		Hint: "ask the lead: git rally handoff --target " + st.LeadHolder() + " --subject " + shellQuote("lift freeze "+target.ID)}
}

// freezeMessage says who froze the room and how it is lifted.
func freezeMessage(b *Fact, p string) string {
	subj := strings.TrimSpace(Sanitize(b.Subject, 200))
	return fmt.Sprintf("the room is frozen by the lead %s (blocker %s: %s); no writes to %s until the lead lifts it with `git rally resolve %s`",
		b.Tool, b.ID, subj, p, b.ID)
}

// leadSuggestions adds what the seat asks of next's caller: the lead
// lifts its freeze when the reason for it is over; everyone else learns
// that writes stop until then. (Closing a plan whose tasks are done is
// package plan's suggestion.)
func (s *State) leadSuggestions(tool, flag string, p *NextPlan) {
	lead := s.LeadHolder()
	if lead == "" {
		return
	}
	for _, b := range s.Freezes() {
		subj := Sanitize(b.Subject, 120)
		if tool == lead {
			p.add(Suggestion{Action: "lift_freeze", Ref: b.ID, score: 80,
				Reason:  fmt.Sprintf("as the lead you froze the room (%q): every other peer's writes stop until you lift it; only the lead can", subj),
				Command: "git rally resolve " + b.ID + flag})
			continue
		}
		p.add(Suggestion{Action: "room_frozen", Ref: b.ID, score: 88,
			Reason:  fmt.Sprintf("the lead %s froze the room (%q); writes stop until it lifts it; wait, or ask the lead", lead, subj),
			Command: "git rally watch --once --timeout 30m"})
	}
}

// RejectedHandoffs returns the handoffs sender sent that their target
// rejected and sender has not reassigned or withdrawn, oldest first.
func (s *State) RejectedHandoffs(sender string) []*Handoff {
	var out []*Handoff
	for _, h := range s.sortedHandoffs() {
		if h.Fact.Tool == sender && h.Rejection != nil && h.State() == Rejected {
			out = append(out, h)
		}
	}
	return out
}
