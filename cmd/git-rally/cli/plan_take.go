package cli

import (
	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/plan"
)

func newCmdPlanTake(f *factory) *cobra.Command {
	var j jsonFlags
	var planName string
	c := &cobra.Command{
		Use:   "take <plan>/<task> [--json]",
		Short: "Claim a ready task: its scopes and task:<plan>/<task>, in one commit (exit 3 when taken or overlapping)",
		Long: `The task is named <plan>/<task>, or <task> with --plan, or <task> alone when
one open plan has it. Refused (exit 3, nothing written) when the task is taken,
done or waits for a dependency, or when another owner's claim overlaps its
scopes. Of two agents taking one task at once, exactly one wins.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o, err := f.Identity()
			if err != nil {
				return err
			}
			st, err := f.State()
			if err != nil {
				return err
			}
			rec, task, err := plan.FindTask(st, args[0], planName)
			if err != nil {
				return err
			}
			_, err = f.AppendFacts(&j, plan.Take(o, rec.ID(), task))
			return err
		},
	}
	c.Flags().StringVar(&planName, "plan", "", "the plan the task belongs to")
	addJSONFlags(c, &j)
	return c
}
