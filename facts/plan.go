package facts

import (
	"sort"
	"strings"
	"time"
)

// A plan (SPEC §15) lives in the ledger as three kinds of fact:
//
//	plan      subject the plan id, body the plan (its tasks); the author leads
//	artifact  ref the plan fact, scopes [task:<plan>/<task>, the task's owns...],
//	          evidence: a report
//	resolve   ref the plan fact, by the lead: the plan is closed
//
// A task is taken by an open claim of task:<plan>/<task>. The projection
// keeps what the rules need without reading the plan's body: the plan fact,
// the reports that count and the close. What a plan's tasks are is the
// business of package plan.

// PlanRecord is a plan fact and what has happened to it.
type PlanRecord struct {
	Fact *Fact `json:"fact"`
	// Reports are the reports that count, by task id: each was written
	// by the owner of the task's open claim and carries evidence. A
	// released claim or a note saying "done" is not a report.
	Reports map[string]*Fact `json:"reports"`
	// Closed is the lead's resolve, nil while the plan is open.
	Closed *Fact `json:"closed,omitempty"`
}

// ID is the plan's own id, the plan fact's subject.
func (p *PlanRecord) ID() string { return p.Fact.Subject }

// Lead is the tool that started the plan.
func (p *PlanRecord) Lead() string { return p.Fact.Tool }

// TaskScope is the scope a task's taker holds.
func TaskScope(plan, task string) string { return "task:" + plan + "/" + task }

// ParseTaskScope splits task:<plan>/<task>.
func ParseTaskScope(s string) (plan, task string, ok bool) {
	rest, ok := strings.CutPrefix(s, "task:")
	if !ok {
		return "", "", false
	}
	plan, task, ok = strings.Cut(rest, "/")
	return plan, task, ok && plan != "" && task != ""
}

// OpenPlans returns the plans not closed yet, in (clock, id) order.
func (s *State) OpenPlans() []*PlanRecord {
	var out []*PlanRecord
	for _, p := range s.Plans {
		if p.Closed == nil {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Fact.Key().Less(out[j].Fact.Key()) })
	return out
}

// OpenPlan returns the open plan with this id, nil when there is none. Of
// two (ledgers that were apart can both start one) the first in (clock,
// id) order is the plan.
func (s *State) OpenPlan(id string) *PlanRecord {
	for _, p := range s.OpenPlans() {
		if p.ID() == id {
			return p
		}
	}
	return nil
}

// LatestPlan returns the newest plan with this id, open or recently
// closed, nil when the projection holds none.
func (s *State) LatestPlan(id string) *PlanRecord {
	if p := s.OpenPlan(id); p != nil {
		return p
	}
	var best *PlanRecord
	for _, p := range s.Plans {
		if p.ID() == id && (best == nil || best.Fact.Key().Less(p.Fact.Key())) {
			best = p
		}
	}
	return best
}

// TaskHolder returns the open claim that holds a task's scope, nil when
// the task is not taken. Of two (a merge) the lower (clock, id) holds.
func (s *State) TaskHolder(plan, task string) *Fact {
	scope := TaskScope(plan, task)
	for _, c := range s.Claims.Near([]string{scope}) {
		if containsStr(c.Scopes, scope) && normAccess(c.Access) != Advisory {
			return c
		}
	}
	return nil
}

// holdsTask reports whether a claim holds a task of a plan.
func holdsTask(c *Fact) bool { return heldTask(c) != "" }

// heldTask is the <plan>/<task> a claim holds, "" for none.
func heldTask(c *Fact) string {
	for _, s := range c.Scopes {
		if p, t, ok := ParseTaskScope(s); ok {
			return p + "/" + t
		}
	}
	return ""
}

// applyPlan projects a plan fact, a report or a close.
func (s *State) applyPlan(f *Fact) {
	if f.Kind == KindPlan {
		if f.Subject != "" {
			s.Plans[f.ID] = &PlanRecord{Fact: f, Reports: map[string]*Fact{}}
		}
		return
	}
	p := s.Plans[f.Ref]
	if p == nil || p.Closed != nil {
		return
	}
	switch f.Kind {
	case KindResolve:
		if f.Tool == p.Lead() || f.Tool == s.LeadHolder() { // the room's lead may close any plan (§19)
			p.Closed = f
		}
	case KindArtifact:
		if len(f.Evidence) == 0 || len(f.Scopes) == 0 {
			return
		}
		plan, task, ok := ParseTaskScope(f.Scopes[0])
		if !ok || plan != p.ID() || p.Reports[task] != nil {
			return
		}
		if h := s.TaskHolder(plan, task); h != nil && h.Owner() == f.Owner() {
			p.Reports[task] = f
		}
	}
}

// forgetPlans drops plans closed longer than NoticeForget before the
// ledger's newest fact; open plans stay however old they are.
func (s *State) forgetPlans(old time.Time) {
	for id, p := range s.Plans {
		if p.Closed != nil {
			if t := p.Closed.Time(); !t.IsZero() && t.Before(old) {
				delete(s.Plans, id)
			}
		}
	}
}

func clonePlans(m map[string]*PlanRecord) map[string]*PlanRecord {
	out := make(map[string]*PlanRecord, len(m))
	for k, p := range m {
		pp := *p
		pp.Reports = cloneMap(p.Reports)
		out[k] = &pp
	}
	return out
}

// Insert adds a suggestion made outside this package (plans: package
// plan) to next's answer at its urgency (answering a handoff is 100,
// reviewing an artifact 70), keeping the most urgent first; "nothing to
// do" gives way.
func (p *NextPlan) Insert(s Suggestion, score int) {
	if len(p.Suggestions) == 1 && p.Suggestions[0].Action == "nothing" {
		p.Suggestions = nil
	}
	s.score = score
	i := sort.Search(len(p.Suggestions), func(i int) bool { return p.Suggestions[i].score < score })
	p.Suggestions = append(p.Suggestions, Suggestion{})
	copy(p.Suggestions[i+1:], p.Suggestions[i:])
	p.Suggestions[i] = s
}
