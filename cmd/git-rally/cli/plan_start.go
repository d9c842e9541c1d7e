package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/plan"
)

func newCmdPlanStart(f *factory) *cobra.Command {
	var j jsonFlags
	c := &cobra.Command{
		Use:   "start <file> [--json]",
		Short: "Lint a plan and record it as one plan fact; you are its lead (exit 3 when it is open already)",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o, err := f.Identity()
			if err != nil {
				return err
			}
			canon, probs, err := lintPlanFile(f, args[0])
			if err != nil {
				return err
			}
			for _, p := range probs {
				fmt.Fprintf(f.Err, "git-rally: error: %s: %s\n", p.Code, facts.Sanitize(p.Message, 2000))
			}
			if err := lintFailure(f, canon, probs, args[0]); err != nil {
				return err
			}
			_, err = f.AppendFacts(&j, plan.Start(o, canon))
			return err
		},
	}
	addJSONFlags(c, &j)
	return c
}
