package plan

import (
	"fmt"
	"strings"

	"github.com/git-rally/git-rally/facts"
)

// Packet is a task's brief for the agent that takes it: the goal, the
// scopes only it may change, how to check it, and the exact command that
// reports it. Its text comes from the ledger, so it is sanitized.
func Packet(b *Board, t Task) string {
	s := func(v string, max int) string { return facts.Sanitize(v, max) }
	var w strings.Builder
	fmt.Fprintf(&w, "You have task %s of plan %s (lead: %s), taken for you in this worktree.\n",
		s(t.ID, 64), s(b.Plan.ID, 64), s(b.Record.Lead(), 128))
	if b.Plan.Goal != "" {
		fmt.Fprintf(&w, "Plan goal: %s\n", s(b.Plan.Goal, 1000))
	}
	if t.Goal != "" {
		fmt.Fprintf(&w, "Task goal: %s\n", s(t.Goal, 2000))
	}
	fmt.Fprintf(&w, "You own, and may change only: %s\n", s(strings.Join(t.Owns, " "), 2000))
	if len(t.DependsOn) > 0 {
		var on []string
		for _, d := range t.DependsOn {
			dv := b.Task(d)
			switch {
			case dv == nil || dv.Report == nil:
				on = append(on, d)
			case dv.Branch != "":
				on = append(on, fmt.Sprintf("%s (done on %s at %s)", d, dv.Branch, short(dv.Report.Revision)))
			default:
				on = append(on, fmt.Sprintf("%s (done at %s)", d, short(dv.Report.Revision)))
			}
		}
		fmt.Fprintf(&w, "It builds on the tasks %s; if your branch lacks their work, merge it first.\n", s(strings.Join(on, ", "), 1000))
	}
	if t.Check != "" {
		fmt.Fprintf(&w, "Check: %s\n", s(t.Check, 500))
	}
	fmt.Fprintf(&w, "When the check passes, commit your work on this branch and report it with evidence:\n  %s\n", ReportCommand(b.Plan.ID, t))
	fmt.Fprintf(&w, "A released claim or a note saying done is not a report. Need a path you do not own? Ask the lead: git rally handoff --target %s --subject \"...\"\n",
		shellQuote(s(b.Record.Lead(), 128)))
	return w.String()
}

func short(rev string) string {
	if rev == "" {
		return "an unrecorded revision"
	}
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}
