package cli

import (
	"github.com/spf13/cobra"
)

func newCmdCheck(f *factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "check",
		Short: "Ask the room before acting",
	}
	opts := &CheckOptions{}
	bw := &cobra.Command{
		Use:   "before-write <path>... [--strict]",
		Short: "May I write these paths? Appends nothing; --strict exits 4 on a stop",
		Args:  cobra.MinimumNArgs(1),
		RunE:  func(c *cobra.Command, args []string) error { return CheckBeforeWrite(f.Factory, opts, args) },
	}
	bw.Flags().BoolVar(&opts.Strict, "strict", false, "exit 4 when a finding says stop")
	addJSONFlags(bw, &opts.J)
	copts := &CheckOptions{}
	bc := &cobra.Command{
		Use:   "before-complete [--strict]",
		Short: "May I call my work done? Stops on claims you hold; warns on your blockers and unresolved handoffs",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, args []string) error { return CheckBeforeComplete(f.Factory, copts) },
	}
	bc.Flags().BoolVar(&copts.Strict, "strict", false, "exit 4 when a finding says stop")
	addJSONFlags(bc, &copts.J)
	c.AddCommand(bw, bc)
	return c
}
