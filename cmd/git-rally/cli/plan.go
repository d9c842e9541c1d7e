package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/plan"
)

func newCmdPlan(f *factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "plan",
		Short: "Workstreams: one job split into tasks that own their paths, closed on evidence",
		Long: `A plan is a JSON file: an id, a goal and tasks, each with the scopes only it
may change (owns), the tasks it depends on, and the check that shows it is done.

  plan lint <file>        check it: no two tasks own overlapping scopes, the
                          dependencies exist and have no cycle
  plan start <file>       record it; you are its lead
  plan status [<plan>]    waiting, ready, taken, done; can it close?
  plan take <task>        claim the task's scopes and task:<plan>/<task>
  plan report <task> --evidence <line>...   the taker's result, releasing the task
  plan close <plan>       the lead closes it once every task is reported
  plan run <plan>         a managed session per ready task (see git rally run)

See docs/plans.md.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error { return c.Help() },
	}
	for _, sub := range []func(*factory) *cobra.Command{
		newCmdPlanLint, newCmdPlanStart, newCmdPlanStatus, newCmdPlanTake, newCmdPlanReport, newCmdPlanClose, newCmdPlanRun,
	} {
		c.AddCommand(sub(f))
	}
	return c
}

// readPlanFile reads and parses a plan file, JSON or YAML ("-": standard
// input).
func readPlanFile(f *factory, name string) (*plan.Plan, error) {
	var data []byte
	var err error
	if name == "-" {
		data, err = io.ReadAll(f.In)
	} else {
		data, err = os.ReadFile(name)
	}
	if err != nil {
		return nil, &usageError{Msg: fmt.Sprintf("cannot read the plan file: %v", err), Hint: "git rally plan lint <file.json>"}
	}
	if plan.IsYAML(name, data) {
		return f.planYAML(data)
	}
	return plan.Parse(data)
}

// lintPlanFile parses and lints a plan file with bare paths taken from
// the repository's top level.
func lintPlanFile(f *factory, name string) (*plan.Plan, []plan.Problem, error) {
	p, err := readPlanFile(f, name)
	if err != nil {
		return nil, nil, err
	}
	pc, err := f.PathContext()
	if err != nil {
		return nil, nil, err
	}
	canon, probs := plan.Lint(p, pc)
	return canon, probs, nil
}

// alreadyInEffect is the note of a write that is already in effect.
func (f *factory) alreadyInEffect(j *jsonFlags, note string) error {
	fmt.Fprintf(f.Err, "git-rally: note: %s; nothing written\n", note)
	if j.On() {
		return f.PrintJSON(j, map[string]any{"facts": []any{}})
	}
	return nil
}
