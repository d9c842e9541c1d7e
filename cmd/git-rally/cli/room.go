package cli

import (
	"github.com/spf13/cobra"
)

func newCmdRoom(f *factory) *cobra.Command {
	opts := &RoomOptions{}
	c := &cobra.Command{
		Use:   "room [--compact] [--budget-bytes N] [--path P]",
		Short: "The live room: peers, claims, handoffs, blockers, risks, worktrees",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, args []string) error { return Room(f.Factory, opts) },
	}
	c.Flags().BoolVar(&opts.Compact, "compact", false, "only what the caller must act on, within --budget-bytes")
	c.Flags().IntVar(&opts.Budget, "budget-bytes", 6000, "byte budget of --compact")
	c.Flags().StringArrayVar(&opts.Paths, "path", nil, "only claims touching this path (repeat)")
	addJSONFlags(c, &opts.J)
	return c
}
