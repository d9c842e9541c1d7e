package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/session"
)

type captureOptions struct {
	lines int
	j     jsonFlags
}

func newCmdCapture(f *factory) *cobra.Command {
	opts := &captureOptions{}
	c := &cobra.Command{
		Use:   "capture <session> [--lines N]",
		Short: "The last lines of a managed session's terminal, sanitized",
		Args:  cobra.ExactArgs(1),
		RunE:  func(c *cobra.Command, args []string) error { return runCapture(f, opts, args[0]) },
	}
	c.Flags().IntVar(&opts.lines, "lines", 50, "how many lines")
	addJSONFlags(c, &opts.j)
	return c
}

// liveSession resolves a session and checks that its terminal runs
// (exit 3 when it does not).
func liveSession(f *factory, name string) (session.Backend, *facts.Fact, error) {
	_, s, err := resolveSession(f, name)
	if err != nil {
		return nil, nil, err
	}
	b, err := backendReady(s.Backend)
	if err != nil {
		return nil, nil, err
	}
	live, err := b.Live()
	if err != nil {
		return nil, nil, err
	}
	if st := session.StateOf(s, live); st != session.StateLive {
		return nil, nil, &facts.RefusedError{Msg: fmt.Sprintf("session %s is %s: its terminal is not running", ident(s.Name), st),
			Hint: "git rally sessions"}
	}
	return b, s, nil
}

func runCapture(f *factory, opts *captureOptions, name string) error {
	if opts.lines < 1 || opts.lines > 10000 {
		return usagef("--lines wants 1 to 10000, not %d", opts.lines)
	}
	b, s, err := liveSession(f, name)
	if err != nil {
		return err
	}
	raw, err := b.Capture(s.Target, opts.lines)
	if err != nil {
		return err
	}
	lines := make([]string, len(raw))
	for i, l := range raw {
		lines[i] = facts.Sanitize(l, 4000)
	}
	if opts.j.On() {
		return f.PrintJSON(&opts.j, map[string]any{"session": s.Name, "lines": lines})
	}
	for _, l := range lines {
		fmt.Fprintln(f.Out, l)
	}
	return nil
}
