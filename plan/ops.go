package plan

import (
	"fmt"
	"strings"
	"time"

	"github.com/git-rally/git-rally/facts"
)

// The append rules of §15. Each runs inside the ledger's append, against
// the tip the new commit extends: of two takers racing for one task, the
// second sees the first's claim and is refused.

// Start records a linted plan (with canonical scopes); its author leads
// it. A plan id that is open already is refused.
func Start(lead facts.Owner, p *Plan) facts.AppendFunc {
	return func(st *facts.State, now time.Time) ([]*facts.Fact, error) {
		if rec := st.OpenPlan(p.ID); rec != nil {
			return nil, &facts.RefusedError{Msg: fmt.Sprintf("plan %s is open already (plan fact %s, lead %s)", p.ID, rec.Fact.ID, rec.Lead()),
				Hint: "git rally plan status " + p.ID}
		}
		return []*facts.Fact{{Kind: facts.KindPlan, Tool: lead.Tool, Session: lead.Session, Subject: p.ID, Body: p.Encode()}}, nil
	}
}

// openBoard finds an open plan by id and computes its board.
func openBoard(st *facts.State, planID string) (*Board, error) {
	rec := st.OpenPlan(planID)
	if rec == nil {
		if st.LatestPlan(planID) != nil {
			return nil, &facts.RefusedError{Msg: fmt.Sprintf("plan %s is closed", planID), Hint: "git rally plan status " + planID}
		}
		return nil, &facts.UsageError{Msg: fmt.Sprintf("no plan %q in this room", planID), Hint: "git rally plan status"}
	}
	return NewBoard(st, rec)
}

func taskOf(b *Board, taskID string) (*TaskView, error) {
	if v := b.Task(taskID); v != nil {
		return v, nil
	}
	return nil, &facts.UsageError{Msg: fmt.Sprintf("plan %s has no task %q; its tasks are %s", b.Plan.ID, taskID, strings.Join(b.Plan.TaskIDs(), ", ")),
		Hint: "git rally plan status " + b.Plan.ID}
}

// Take claims a ready task's scopes and task:<plan>/<task> for o in one
// claim. Refused when the task is taken, done or waiting, or when another
// owner's claim overlaps its scopes (a facts.ConflictError).
func Take(o facts.Owner, planID, taskID string) facts.AppendFunc {
	return func(st *facts.State, now time.Time) ([]*facts.Fact, error) {
		b, err := openBoard(st, planID)
		if err != nil {
			return nil, err
		}
		v, err := taskOf(b, taskID)
		if err != nil {
			return nil, err
		}
		name := planID + "/" + taskID
		switch {
		case v.State == Done:
			return nil, &facts.RefusedError{Msg: fmt.Sprintf("task %s is done: %s reported it (%s)", name, v.Report.Tool, v.Report.ID),
				Hint: "git rally plan status " + planID}
		case v.State == Taken && v.Holder.Owner() != o:
			return nil, &facts.RefusedError{Msg: fmt.Sprintf("task %s is taken by %s (claim %s)", name, v.Holder.Owner(), v.Holder.ID),
				Hint: "take a ready task instead: git rally plan status " + planID}
		case v.State == Waiting:
			return nil, &facts.RefusedError{Msg: fmt.Sprintf("task %s waits for %s: a task starts when every task it depends on is done", name, andList(v.WaitingOn)),
				Hint: "git rally plan status " + planID}
		}
		scopes := append(append([]string{}, v.Task.Owns...), facts.TaskScope(planID, taskID))
		return facts.Claim(facts.ClaimRequest{Owner: o, Scopes: scopes, Access: facts.Exclusive,
			Subject: "plan " + name})(st, now)
	}
}

// ReportRequest is a taker's result.
type ReportRequest struct {
	Owner    facts.Owner
	Plan     string
	Task     string
	Evidence []string
	Revision string
	URI      string
}

// Report writes the taker's report (an artifact whose ref is the plan
// fact, carrying the task scope, then the scopes the work was done on, and
// the evidence) and the release of the
// taker's claims on the task, in one commit. Only the taker reports, and
// only with evidence. A second report of the same taker writes nothing.
func Report(r ReportRequest) facts.AppendFunc {
	return func(st *facts.State, now time.Time) ([]*facts.Fact, error) {
		if len(r.Evidence) == 0 {
			return nil, &facts.UsageError{Msg: "plan report needs --evidence: what shows the task is done (a check that passed, a test run)",
				Hint: fmt.Sprintf("git rally plan report %s/%s --evidence \"<check> passed\"", r.Plan, r.Task)}
		}
		for _, e := range r.Evidence {
			if strings.TrimSpace(e) == "" {
				return nil, &facts.UsageError{Msg: "an --evidence line is empty"}
			}
		}
		b, err := openBoard(st, r.Plan)
		if err != nil {
			return nil, err
		}
		v, err := taskOf(b, r.Task)
		if err != nil {
			return nil, err
		}
		name := r.Plan + "/" + r.Task
		scope := facts.TaskScope(r.Plan, r.Task)
		switch {
		case v.State == Done && v.Report.Owner() == r.Owner:
			return nil, nil // already in effect
		case v.State == Done:
			return nil, &facts.RefusedError{Msg: fmt.Sprintf("task %s is done already: %s reported it (%s)", name, v.Report.Tool, v.Report.ID)}
		case v.Holder == nil:
			return nil, &facts.RefusedError{Msg: fmt.Sprintf("task %s is not taken; only its taker may report it", name),
				Hint: "git rally plan take " + name}
		case v.Holder.Owner() != r.Owner:
			return nil, &facts.RefusedError{Msg: fmt.Sprintf("task %s is taken by %s, not %s; only the taker may report it", name, v.Holder.Owner(), r.Owner),
				Hint: fmt.Sprintf("send what you found to the taker: git rally handoff --target %s --subject \"%s\"", v.Holder.Tool, name)}
		}
		out := []*facts.Fact{{Kind: facts.KindArtifact, Tool: r.Owner.Tool, Session: r.Owner.Session, Ref: b.Record.Fact.ID,
			Scopes: append([]string{scope}, v.Task.Owns...), Subject: "report " + name, Evidence: r.Evidence, Revision: r.Revision, URI: r.URI}}
		for _, c := range st.OwnedClaims(r.Owner) {
			for _, s := range c.Scopes {
				if s == scope {
					out = append(out, &facts.Fact{Kind: facts.KindRelease, Tool: r.Owner.Tool, Session: r.Owner.Session,
						Ref: c.ID, Scopes: c.Scopes, Reason: "reported " + name})
					break
				}
			}
		}
		return out, nil
	}
}

// Close resolves the plan fact. Only the lead closes, and only when every
// task is done; closing a closed plan writes nothing.
func Close(o facts.Owner, planID string) facts.AppendFunc {
	return func(st *facts.State, now time.Time) ([]*facts.Fact, error) {
		rec := st.OpenPlan(planID)
		if rec == nil {
			if st.LatestPlan(planID) != nil {
				return nil, nil // already in effect
			}
			return nil, &facts.UsageError{Msg: fmt.Sprintf("no plan %q in this room", planID), Hint: "git rally plan status"}
		}
		if o.Tool != rec.Lead() && o.Tool != st.LeadHolder() {
			return nil, &facts.RefusedError{Msg: fmt.Sprintf("plan %s is led by %s, not %s; only its lead or the room's lead may close it", planID, rec.Lead(), o.Tool),
				Hint: fmt.Sprintf("tell the lead: git rally handoff --target %s --subject \"plan %s\"", rec.Lead(), planID)}
		}
		b, err := NewBoard(st, rec)
		if err != nil {
			return nil, err
		}
		if !b.CanClose {
			var open []string
			for _, v := range b.Tasks {
				switch v.State {
				case Done:
				case Taken:
					open = append(open, fmt.Sprintf("%s (taken by %s)", v.Task.ID, v.Holder.Owner()))
				default:
					open = append(open, fmt.Sprintf("%s (%s)", v.Task.ID, v.State))
				}
			}
			return nil, &facts.RefusedError{Msg: fmt.Sprintf("plan %s has %d of %d tasks done; not reported yet: %s (a released claim or a note is not a report)",
				planID, b.Done, b.Total, strings.Join(open, ", ")), Hint: "git rally plan status " + planID}
		}
		return []*facts.Fact{{Kind: facts.KindResolve, Tool: o.Tool, Session: o.Session, Ref: rec.Fact.ID, Subject: planID}}, nil
	}
}
