package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"github.com/git-rally/git-rally/facts"
)

type suggestionJSON struct {
	Action  string `json:"action"`
	Reason  string `json:"reason"`
	Ref     string `json:"ref,omitempty"`
	Command string `json:"command"`
}

type overdueJSON struct {
	ID     string `json:"id"`
	Target string `json:"target"`
	Risk   string `json:"risk"`
}

type nextJSON struct {
	Tool        string           `json:"tool"`
	Suggestions []suggestionJSON `json:"suggestions"`
	Overdue     []overdueJSON    `json:"overdue"`
}

func newCmdNext(f *factory) *cobra.Command {
	var j jsonFlags
	var dry bool
	c := &cobra.Command{
		Use:   "next [--dry-run]",
		Short: "Suggest your next move (a suggestion, not an order); records overdue handoffs you sent",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			o, err := f.Asker()
			if err != nil {
				return err
			}
			st, err := f.State()
			if err != nil {
				return err
			}
			now := f.MustNow()
			plan := st.Next(o, now)
			addPlanSuggestions(st, o, now, &plan)
			risks := map[string]string{}
			if !dry && hasNewOverdue(plan) {
				l, _ := f.Ledger()
				written, err := l.Append(facts.NoResponseRisks(o))
				if err != nil {
					return err
				}
				for _, w := range written {
					risks[w.Ref] = w.ID
				}
			}
			out := nextJSON{Tool: o.Tool, Suggestions: []suggestionJSON{}, Overdue: []overdueJSON{}}
			for _, s := range plan.Suggestions {
				out.Suggestions = append(out.Suggestions, suggestionJSON{Action: s.Action, Reason: s.Reason, Ref: s.Ref, Command: s.Command})
			}
			for _, od := range plan.Overdue {
				risk := od.Risk
				if risk == "" {
					risk = risks[od.ID]
				}
				out.Overdue = append(out.Overdue, overdueJSON{ID: od.ID, Target: od.Target, Risk: risk})
			}
			if j.On() {
				return f.PrintJSON(&j, out)
			}
			for i, s := range out.Suggestions {
				fmt.Fprintf(f.Out, "%d. %s: %s\n   %s\n", i+1, s.Action, cmdutil.LocalizeTimes(s.Reason, time.Local), s.Command)
			}
			for _, od := range out.Overdue {
				r := od.Risk
				if r == "" {
					r = "(not recorded: --dry-run)"
				}
				fmt.Fprintf(f.Out, "overdue: %s to %s, risk %s\n", od.ID, od.Target, r)
			}
			return nil
		},
	}
	c.Flags().BoolVar(&dry, "dry-run", false, "report without writing the no-response risks")
	addJSONFlags(c, &j)
	return c
}

func hasNewOverdue(p facts.NextPlan) bool {
	for _, o := range p.Overdue {
		if o.New {
			return true
		}
	}
	return false
}
