package cli

import (
	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
)

// With --json a failure is also an answer on stdout, so an agent that
// parses stdout learns what happened: {"error": {...}} (SPEC 7).

// checkQuery refuses a --query that is not a gjson path before the
// command runs, so a bad query never follows a write.
func checkQuery(c *cobra.Command, args []string) error {
	fl := c.Flags().Lookup("query")
	if fl == nil || fl.Value.String() == "" {
		return nil
	}
	return cmdutil.ValidQuery(fl.Value.String())
}
