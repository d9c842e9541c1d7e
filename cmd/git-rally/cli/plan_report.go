package cli

import (
	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/plan"
)

type planReportOptions struct {
	plan, revision, uri string
	evidence            []string
	j                   jsonFlags
}

func newCmdPlanReport(f *factory) *cobra.Command {
	opts := &planReportOptions{}
	c := &cobra.Command{
		Use:   "report <plan>/<task> --evidence <line>... [--revision <rev>] [--uri <u>] [--json]",
		Short: "The taker's result: an artifact with the evidence, and the release of the task, in one commit",
		Long: `Only the task's taker may report it (exit 3 otherwise), and only with
evidence (--evidence, repeat for several lines; none: exit 2). The report is
an artifact whose ref is the plan fact; the same commit releases the task's
claim. Reporting it again writes nothing.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o, err := f.Identity()
			if err != nil {
				return err
			}
			if len(opts.evidence) == 0 {
				return &usageError{Msg: "plan report needs --evidence: what shows the task is done (a check that passed, a test run)",
					Hint: "git rally plan report " + args[0] + " --evidence \"<check> passed\""}
			}
			rev := ""
			if opts.revision != "" {
				if rev, err = resolveRevision(f, opts.revision); err != nil {
					return err
				}
			}
			st, err := f.State()
			if err != nil {
				return err
			}
			rec, task, err := plan.FindTask(st, args[0], opts.plan)
			if err != nil {
				return err
			}
			fs, err := f.AppendFacts(&opts.j, plan.Report(plan.ReportRequest{Owner: o, Plan: rec.ID(), Task: task,
				Evidence: opts.evidence, Revision: rev, URI: opts.uri}))
			if err == nil && len(fs) == 0 {
				return f.alreadyInEffect(&opts.j, "task "+rec.ID()+"/"+task+" is reported already")
			}
			return err
		},
	}
	c.Flags().StringArrayVar(&opts.evidence, "evidence", nil, "a line of evidence: a check that passed, a test run (repeat)")
	c.Flags().StringVar(&opts.revision, "revision", "", "the commit with the work")
	c.Flags().StringVar(&opts.uri, "uri", "", "a link to more (a CI run, a pull request)")
	c.Flags().StringVar(&opts.plan, "plan", "", "the plan the task belongs to")
	addJSONFlags(c, &opts.j)
	return c
}
