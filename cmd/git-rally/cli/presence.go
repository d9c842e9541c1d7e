package cli

import (
	"github.com/spf13/cobra"
)

type presenceOptions struct {
	subject string
	j       jsonFlags
}

func newCmdEnter(f *factory) *cobra.Command {
	opts := &presenceOptions{}
	c := &cobra.Command{
		Use:   "enter [--subject <text>]",
		Short: "Say you are here (a presence fact)",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, args []string) error { return Enter(f.Factory, opts.subject, &opts.j) },
	}
	c.Flags().StringVar(&opts.subject, "subject", "", "what you are doing")
	addJSONFlags(c, &opts.j)
	return c
}

func newCmdLeave(f *factory) *cobra.Command {
	opts := &presenceOptions{}
	c := &cobra.Command{
		Use:   "leave",
		Short: "Leave the room; closes all your claims",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, args []string) error { return Leave(f.Factory, opts.subject, &opts.j) },
	}
	c.Flags().StringVar(&opts.subject, "subject", "", "a parting note")
	addJSONFlags(c, &opts.j)
	return c
}

func newCmdWhoami(f *factory) *cobra.Command {
	var j jsonFlags
	c := &cobra.Command{
		Use:   "whoami",
		Short: "Print the identity writing commands would use",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, args []string) error { return Whoami(f.Factory, &j) },
	}
	addJSONFlags(c, &j)
	return c
}
