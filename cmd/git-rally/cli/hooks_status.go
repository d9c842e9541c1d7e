package cli

import (
	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/hooks"
)

func newCmdHooksStatus(f *factory) *cobra.Command {
	opts := &hooksOptions{}
	c := &cobra.Command{
		Use:   "status [--git] [--claude] [--codex] [--gemini] [--cursor] [--mcp]",
		Short: "Show which of rally's hooks are installed where (no flag: git, Claude Code, Codex and every other host with rally's lines)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return runHooks(f, opts, hookOps{hooks.Status, hooks.StatusMCP, false, false}, func(r hooks.Result) string { return r.State + ":" })
		},
	}
	addHostFlags(c, &opts.hosts)
	addJSONFlags(c, &opts.j)
	return c
}
