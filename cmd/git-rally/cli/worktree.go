package cli

import (
	"github.com/spf13/cobra"
)

func init() { extraCommands = append(extraCommands, newCmdWorktree) }

// worktreeCommands are the subcommands of `git rally worktree`; each
// registers from its own file.
var worktreeCommands []func(*factory) *cobra.Command

func newCmdWorktree(f *factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "worktree",
		Short: "Agent worktrees on rally/<name> branches, and the read-only merge plan",
		Long: `An agent worktree is <main checkout>/.rally/worktrees/<name> on a new branch
rally/<name>. Commands run inside it act as session <name> without flags.
worktree plan predicts, without changing anything, which branches merge
cleanly into the base and with each other, and in which order to merge them.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error { return c.Help() },
	}
	for _, sub := range worktreeCommands {
		c.AddCommand(sub(f))
	}
	return c
}
