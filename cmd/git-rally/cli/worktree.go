package cli

import (
	"github.com/spf13/cobra"
)

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
	for _, sub := range []func(*factory) *cobra.Command{newCmdWorktreeAdd, newCmdWorktreeList, newCmdWorktreePlan, newCmdWorktreeRemove, newCmdWorktreePrune} {
		c.AddCommand(sub(f))
	}
	return c
}
