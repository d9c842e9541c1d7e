package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/plan"
	"github.com/git-rally/git-rally/session"
)

type planTaskJSON struct {
	ID        string   `json:"id"`
	Goal      string   `json:"goal,omitempty"`
	Owns      []string `json:"owns"`
	DependsOn []string `json:"depends_on"`
	Check     string   `json:"check,omitempty"`
	Agent     string   `json:"agent,omitempty"`
	State     string   `json:"state"`
	Owner     *string  `json:"owner"`
	Session   string   `json:"session,omitempty"`
	Claim     string   `json:"claim,omitempty"`
	Report    *string  `json:"report"`
	Evidence  []string `json:"evidence,omitempty"`
	Revision  string   `json:"revision,omitempty"`
	WaitingOn []string `json:"waiting_on,omitempty"`
	// stalled: its session's agent exited without a report
	Rerun      string `json:"rerun,omitempty"`
	ExitStatus *int   `json:"exit_status,omitempty"`
	LastLine   string `json:"last_line,omitempty"`
}

type planStatusJSON struct {
	Plan     string         `json:"plan"`
	Goal     string         `json:"goal,omitempty"`
	Fact     string         `json:"fact"`
	Lead     string         `json:"lead"`
	Tasks    []planTaskJSON `json:"tasks"`
	Done     int            `json:"done"`
	Total    int            `json:"total"`
	CanClose bool           `json:"can_close"`
	Closed   bool           `json:"closed"`
	ClosedBy string         `json:"closed_by,omitempty"`
}

func newCmdPlanStatus(f *factory) *cobra.Command {
	var j jsonFlags
	c := &cobra.Command{
		Use:   "status [<plan>] [--json]",
		Short: "Each task waiting, ready, taken (by whom) or done (reported with evidence), and whether the plan can close",
		Long: `Without a name, the one open plan. A plan is named by its id or its plan
fact's id. A task is done only when its taker reported it with evidence
(git rally plan report); a released claim or a note is not a report. A task
taken by a managed session whose agent exited without a report is stalled,
shown with the command that reruns it.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			st, err := f.State()
			if err != nil {
				return err
			}
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			rec, err := plan.Find(st, name)
			if err != nil {
				return err
			}
			b, err := plan.NewBoard(st, rec)
			if err != nil {
				return err
			}
			out := toPlanStatusJSON(b)
			markStalled(st, &out)
			if j.On() {
				return f.PrintJSON(&j, out)
			}
			printPlanStatus(f.Out, out)
			return nil
		},
	}
	addJSONFlags(c, &j)
	return c
}

func toPlanStatusJSON(b *plan.Board) planStatusJSON {
	out := planStatusJSON{Plan: b.Plan.ID, Goal: b.Plan.Goal, Fact: b.Record.Fact.ID, Lead: b.Record.Lead(), Tasks: []planTaskJSON{},
		Done: b.Done, Total: b.Total, CanClose: b.CanClose, Closed: b.Closed}
	if b.Record.Closed != nil {
		out.ClosedBy = b.Record.Closed.ID
	}
	for _, v := range b.Tasks {
		t := planTaskJSON{ID: v.Task.ID, Goal: v.Task.Goal, Owns: nonNil(v.Task.Owns), DependsOn: nonNil(v.Task.DependsOn),
			Check: v.Task.Check, Agent: v.Task.Agent, State: v.State, WaitingOn: v.WaitingOn}
		switch {
		case v.Report != nil:
			tool, id := v.Report.Tool, v.Report.ID
			t.Owner, t.Session, t.Report = &tool, v.Report.Session, &id
			t.Evidence, t.Revision = v.Report.Evidence, v.Report.Revision
		case v.Holder != nil:
			tool := v.Holder.Tool
			t.Owner, t.Session, t.Claim = &tool, v.Holder.Session, v.Holder.ID
		}
		out.Tasks = append(out.Tasks, t)
	}
	return out
}

func printPlanStatus(w io.Writer, p planStatusJSON) {
	s := func(v string) string { return facts.Sanitize(v, 200) }
	state := fmt.Sprintf("%d of %d done", p.Done, p.Total)
	switch {
	case p.Closed:
		state += ", closed"
	case p.CanClose:
		state += ", can close: git rally plan close " + s(p.Plan)
	}
	fmt.Fprintf(w, "plan %s (lead %s, %s): %s\n", s(p.Plan), s(p.Lead), p.Fact, state)
	if p.Goal != "" {
		fmt.Fprintf(w, "  goal: %s\n", s(p.Goal))
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	for _, t := range p.Tasks {
		who := ""
		if t.Owner != nil {
			who = s(*t.Owner)
			if t.Session != "" {
				who += "@" + s(t.Session)
			}
		}
		extra := ""
		switch {
		case t.Report != nil:
			extra = "report " + *t.Report + ": " + s(strings.Join(t.Evidence, "; "))
		case len(t.WaitingOn) > 0:
			extra = "waits for " + strings.Join(t.WaitingOn, ", ")
		case t.Rerun != "":
			extra = "its agent exited"
			if t.ExitStatus != nil {
				extra += fmt.Sprintf(" (status %d: %s)", *t.ExitStatus, s(t.LastLine))
			}
			extra += "; rerun: " + t.Rerun
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", s(t.ID), t.State, who, s(strings.Join(t.Owns, " ")), extra)
	}
	tw.Flush()
}

// Stalled is the state plan status gives a taken task whose managed
// session exited without reporting it.
const Stalled = "stalled"

// markStalled turns each taken task whose holder is a managed session
// that exited (its agent ended, nobody stopped it) into stalled, with
// the command that reruns it and how the agent ended. The backend is
// asked once, and only when such a session may exist.
func markStalled(st *facts.State, out *planStatusJSON) {
	need := false
	for _, t := range out.Tasks {
		if s := st.Sessions[t.Session]; t.State == plan.Taken && s != nil && s.Backend != "" && s.Status != session.StatusStopped {
			need = true
		}
	}
	if !need {
		return
	}
	b, err := newBackend("")
	if err != nil {
		return
	}
	live, err := liveTargets(b, st)
	if err != nil {
		return
	}
	for i := range out.Tasks {
		t := &out.Tasks[i]
		s := st.Sessions[t.Session]
		if t.State != plan.Taken || s == nil || s.Backend == "" || session.StateOf(s, live) != session.StateExited {
			continue
		}
		t.State = Stalled
		agent := ""
		if t.Agent == "" && s.Agent != "" {
			agent = " --agent " + ident(s.Agent)
		}
		t.Rerun = fmt.Sprintf("git rally stop %s && git rally plan run %s%s", ident(s.Name), ident(out.Plan), agent)
		infos := []session.Info{{Fact: s, State: session.StateExited}}
		session.AddEndings(b, infos)
		if e := infos[0].Ended; e != nil {
			status := e.Status
			t.ExitStatus, t.LastLine = &status, facts.Sanitize(e.LastLine, 400)
		}
	}
}

// addPlanSuggestions adds what the open plans ask of o to next's answer.
func addPlanSuggestions(st *facts.State, o facts.Owner, now time.Time, np *facts.NextPlan) {
	plan.Suggest(st, o, now, np)
}
