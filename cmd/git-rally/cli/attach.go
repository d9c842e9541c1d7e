package cli

import (
	"os"

	"github.com/spf13/cobra"
)

func newCmdAttach(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "attach <session>",
		Short: "Attach this terminal to a managed session (detach with the tmux prefix, then d)",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if !isTerminal(os.Stdin) || !isTerminal(os.Stdout) {
				return &usageError{Msg: "attach needs a terminal (stdin and stdout are not one)",
					Hint: "git rally capture " + args[0] + "   # its last lines, without a terminal"}
			}
			b, s, err := liveSession(f, args[0])
			if err != nil {
				return err
			}
			return b.Attach(s.Target)
		},
	}
}
