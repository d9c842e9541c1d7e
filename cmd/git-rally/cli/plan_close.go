package cli

import (
	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/plan"
)

func newCmdPlanClose(f *factory) *cobra.Command {
	var j jsonFlags
	c := &cobra.Command{
		Use:   "close <plan> [--json]",
		Short: "The lead closes the plan once every task is reported with evidence (exit 3 before, or for anyone else)",
		Long: `Appends a resolve of the plan fact. Only the plan's lead (the tool that
started it) may close it, and only when every task is done: reported by its
taker with evidence. Then merge the task branches in the order
git rally worktree plan suggests.`,
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
			rec, err := plan.Find(st, args[0])
			if err != nil {
				return err
			}
			fs, err := f.AppendFacts(&j, plan.Close(o, rec.ID()))
			if err == nil && len(fs) == 0 {
				return f.alreadyInEffect(&j, "plan "+rec.ID()+" is closed already")
			}
			return err
		},
	}
	addJSONFlags(c, &j)
	return c
}
