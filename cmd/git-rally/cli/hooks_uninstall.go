package cli

import (
	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/hooks"
)

func newCmdHooksUninstall(f *factory) *cobra.Command {
	opts := &hooksOptions{}
	c := &cobra.Command{
		Use:   "uninstall [--git] [--claude] [--codex] [--gemini] [--cursor] [--mcp]",
		Short: "Remove rally's hooks and put back what was there (no flag: every host with rally's lines)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return runHooks(f, opts, hookOps{hooks.Uninstall, hooks.UninstallMCP, false, true}, func(r hooks.Result) string {
				if r.Changed {
					return "removed from"
				}
				return "not installed in"
			})
		},
	}
	addHostFlags(c, &opts.hosts)
	addJSONFlags(c, &opts.j)
	return c
}
