package facts

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// InboxItem is a handoff that waits for its target.
type InboxItem struct {
	Fact  *Fact
	State string
	Age   time.Duration
	Stale bool
}

// Inbox lists what waits for any of tools, oldest first: the handoffs
// addressed to them (to all: every peer but the sender) that nobody has
// answered, in state open, or expired when swept (and then stale); and
// the handoffs one of them acknowledged but has not resolved, in state
// acknowledged, which wait for no answer but are its work in progress.
func (s *State) Inbox(tools []string, now time.Time) []InboxItem {
	var out []InboxItem
	for _, h := range s.sortedHandoffs() {
		by := h.AnsweredBy()
		mine := false
		for _, t := range tools {
			if (by == "" && AddressedTo(h.Fact, t)) || (by != "" && by == t) {
				mine = true
			}
		}
		if !mine || h.Rejection != nil {
			continue // a rejected handoff waits for its sender, not its target
		}
		v := s.HandoffViewOf(h, now)
		out = append(out, InboxItem{Fact: h.Fact, State: v.State, Age: v.Age, Stale: v.Stale})
	}
	return out
}

// Suggestion is one move next proposes, with the exact command to run.
type Suggestion struct {
	Action, Reason, Ref, Command string
	score                        int
}

// Overdue is a handoff the caller sent whose reply deadline passed with no
// answer, and the risk that records it.
type Overdue struct {
	ID, Target, Risk string
	New              bool
}

// NextPlan is next's answer.
type NextPlan struct {
	Suggestions []Suggestion
	Overdue     []Overdue
}

// Next suggests the caller's next moves, most urgent first. It writes
// nothing; the overdue handoffs without a risk yet are returned for the
// caller to record with NoResponseRisks.
func (s *State) Next(me Owner, now time.Time) NextPlan {
	var p NextPlan
	tool := me.Tool
	flag := " --tool " + shellQuote(tool)
	for _, it := range s.Inbox([]string{tool}, now) {
		subj := Sanitize(it.Fact.Subject, 120)
		sc := 100
		if it.Stale {
			sc = 60
		}
		switch it.State {
		case "open", "expired":
			p.add(Suggestion{Action: "answer_handoff", Ref: it.Fact.ID, score: sc,
				Reason:  fmt.Sprintf("%s handed you %q %s ago; acknowledge it, then resolve it when done", it.Fact.Tool, subj, Ago(it.Age)),
				Command: "git rally receipt " + it.Fact.ID + flag})
		case "acknowledged":
			p.add(Suggestion{Action: "resolve_handoff", Ref: it.Fact.ID, score: sc - 15,
				Reason:  fmt.Sprintf("you acknowledged %q from %s; resolve it, or record the result as an artifact", subj, it.Fact.Tool),
				Command: "git rally resolve " + it.Fact.ID + flag})
		}
	}
	for _, h := range s.sortedHandoffs() {
		if h.Fact.Tool != tool {
			continue
		}
		if r := h.Rejection; r != nil {
			subj := Sanitize(OneLine(h.Fact.Subject, 80), 80)
			p.add(Suggestion{Action: "reassign_handoff", Ref: h.Fact.ID, score: 92,
				Reason: fmt.Sprintf("%s rejected %q: %s; hand it to someone else, or withdraw it (`git rally retract %s --reason withdrawn`)",
					r.Tool, Sanitize(h.Fact.Subject, 120), Sanitize(r.Reason, 200), h.Fact.ID),
				Command: fmt.Sprintf("git rally handoff --ref %s --target <tool> --subject %s%s", h.Fact.ID, shellQuote(subj), flag)})
			continue
		}
		v := s.HandoffViewOf(h, now)
		if !v.Overdue {
			continue
		}
		p.Overdue = append(p.Overdue, Overdue{ID: h.Fact.ID, Target: h.Fact.Target, Risk: h.Overdue, New: h.Overdue == ""})
		p.add(Suggestion{Action: "follow_up_handoff", Ref: h.Fact.ID, score: 90,
			Reason: fmt.Sprintf("%s has not answered %q; its deadline %s passed", h.Fact.Target, Sanitize(h.Fact.Subject, 120), h.Fact.AckBy),
			Command: fmt.Sprintf("git rally handoff --target %s --subject %s%s", shellQuote(h.Fact.Target),
				shellQuote("follow-up: "+Sanitize(OneLine(h.Fact.Subject, 80), 80)), flag)})
	}
	// Every held claim is listed, the soonest to lapse first: an agent
	// holding claims always has something to continue or release.
	var held []ClaimView
	for _, c := range s.ClaimViews(now) {
		if c.Fact.Owner() == me {
			held = append(held, c)
		}
	}
	sort.SliceStable(held, func(i, j int) bool { return held[i].LeaseExpires.Before(held[j].LeaseExpires) })
	for i, c := range held {
		scopes := strings.Join(c.Fact.Scopes, " ")
		switch {
		case c.Contested:
			p.add(Suggestion{Action: "release_contested_claim", Ref: c.Fact.ID, score: 95,
				Reason:  fmt.Sprintf("your claim on %s is contested: claim %s comes first in (clock, id) order and holds", scopes, c.HeldOver),
				Command: "git rally release " + c.Fact.ID + flag})
		case c.LeaseState == "expired":
			p.add(Suggestion{Action: "continue_or_release_claim", Ref: c.Fact.ID, score: 75,
				Reason:  fmt.Sprintf("your lease on %s expired %s ago (it still blocks others); any fact you write renews it, or release it if you are done", scopes, Ago(now.Sub(c.LeaseExpires))),
				Command: "git rally release " + c.Fact.ID + flag})
		default:
			sc := 50 - i // below what others wait for; the soonest first
			if c.LeaseExpires.Sub(now) < 5*time.Minute {
				sc = 75
			}
			p.add(Suggestion{Action: "continue_or_release_claim", Ref: c.Fact.ID, score: sc,
				Reason:  fmt.Sprintf("you hold %s; the lease ends in %s and any fact you write renews it; release it when you are done", scopes, Ago(c.LeaseExpires.Sub(now))),
				Command: "git rally release " + c.Fact.ID + flag})
		}
	}
	for _, a := range sortedArtifacts(s.Artifacts) {
		if a.For != tool || a.Fact.Tool == tool {
			continue
		}
		p.add(Suggestion{Action: "review_artifact", Ref: a.Fact.ID, score: 70,
			Reason:  fmt.Sprintf("%s produced %q for you", a.Fact.Tool, Sanitize(a.Fact.Subject, 120)),
			Command: "git rally show " + a.Fact.ID + " && git rally receipt " + a.Fact.ID + flag})
	}
	s.leadSuggestions(tool, flag, &p)
	sort.SliceStable(p.Suggestions, func(i, j int) bool { return p.Suggestions[i].score > p.Suggestions[j].score })
	if len(p.Suggestions) == 0 {
		p.Suggestions = []Suggestion{{Action: "nothing", Reason: "nothing waits for you; claim what you start on",
			Command: "git rally claim <path>" + flag}}
	}
	return p
}

func (p *NextPlan) add(s Suggestion) { p.Suggestions = append(p.Suggestions, s) }

func sortedArtifacts(m map[string]*Artifact) []*Artifact {
	out := make([]*Artifact, 0, len(m))
	for _, a := range m {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Fact.Key().Less(out[j].Fact.Key()) })
	return out
}

// NoResponseRisks appends one no-response risk per overdue handoff of me
// that has none yet, re-checked under the lock so two runs of next never
// write two.
func NoResponseRisks(me Owner) AppendFunc {
	return func(st *State, now time.Time) ([]*Fact, error) {
		var out []*Fact
		for _, o := range st.Next(me, now).Overdue {
			if !o.New {
				continue
			}
			out = append(out, &Fact{Kind: KindRisk, Tool: me.Tool, Session: me.Session, Ref: o.ID, Target: o.Target,
				Subject: "no-response: " + o.ID, Severity: "warn"})
		}
		return out, nil
	}
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.:/@+=,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
