package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/plan"
)

type lintProblemJSON struct {
	Code    string   `json:"code"`
	Tasks   []string `json:"tasks"`
	Scopes  []string `json:"scopes"`
	Message string   `json:"message"`
}

type lintJSON struct {
	OK       bool              `json:"ok"`
	Plan     string            `json:"plan"`
	Tasks    int               `json:"tasks"`
	Problems []lintProblemJSON `json:"problems"`
}

func newCmdPlanLint(f *factory) *cobra.Command {
	var j jsonFlags
	c := &cobra.Command{
		Use:   "lint <file> [--json]",
		Short: "Check a plan: exit 0 valid, 1 with problems, 2 when it does not parse",
		Long: `Problems: overlapping-owners (two tasks own scopes that overlap by the rules
claims conflict by), unknown-dependency, cycle, duplicate-id, no-owns, and
bad-id or bad-scope for what could never be claimed. Bare paths in owns are
taken from the repository's top level. "-" reads the plan from stdin.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			canon, probs, err := lintPlanFile(f, args[0])
			if err != nil {
				return err
			}
			out := toLintJSON(canon, probs)
			if j.On() {
				if err := f.PrintJSON(&j, out); err != nil {
					return err
				}
			} else {
				for _, p := range out.Problems {
					fmt.Fprintf(f.Out, "%s: %s\n", p.Code, facts.Sanitize(p.Message, 2000))
				}
				if out.OK {
					fmt.Fprintf(f.Out, "plan %s: %s, no problems\n", out.Plan, plural(out.Tasks, "task"))
				}
			}
			return lintFailure(f, canon, probs, args[0])
		},
	}
	addJSONFlags(c, &j)
	return c
}

func toLintJSON(p *plan.Plan, probs []plan.Problem) lintJSON {
	out := lintJSON{OK: len(probs) == 0, Plan: p.ID, Tasks: len(p.Tasks), Problems: []lintProblemJSON{}}
	for _, pr := range probs {
		pj := lintProblemJSON{Code: pr.Code, Tasks: pr.Tasks, Scopes: pr.Scopes, Message: pr.Message}
		if pj.Scopes == nil {
			pj.Scopes = []string{}
		}
		out.Problems = append(out.Problems, pj)
	}
	return out
}

// lintFailure is exit 1 with a line on stderr when the plan has problems.
func lintFailure(f *factory, p *plan.Plan, probs []plan.Problem, file string) error {
	if len(probs) == 0 {
		return nil
	}
	s := "s"
	if len(probs) == 1 {
		s = ""
	}
	fmt.Fprintf(f.Err, "git-rally: error: plan %s has %d problem%s\n", p.ID, len(probs), s)
	fmt.Fprintf(f.Err, "git-rally: hint: fix the plan file and run git rally plan lint %s\n", file)
	return &exitError{Code: ExitError}
}
