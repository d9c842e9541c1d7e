package cli

import (
	"errors"
	"fmt"
	"strings"

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

// capturable resolves a session whose terminal can be read: a live one,
// or an exited one whose terminal the backend kept with its last output.
func capturable(f *factory, name string) (session.Backend, *facts.Fact, error) {
	b, s, err := liveSession(f, name)
	var re *facts.RefusedError
	if err == nil || !errors.As(err, &re) {
		return b, s, err
	}
	_, s2, rerr := resolveSession(f, name)
	if rerr != nil || s2.Status == session.StatusStopped {
		return nil, nil, err
	}
	b2, berr := backendReady(s2.Backend)
	if berr != nil {
		return nil, nil, err
	}
	if e, ok := b2.(session.Ender); ok && e.Exists(s2.Target) {
		return b2, s2, nil
	}
	return nil, nil, err
}

func runCapture(f *factory, opts *captureOptions, name string) error {
	if opts.lines < 1 || opts.lines > 10000 {
		return usagef("--lines wants 1 to 10000, not %d", opts.lines)
	}
	b, s, err := capturable(f, name)
	if err != nil {
		return err
	}
	raw, err := b.Capture(s.Target, opts.lines)
	if err != nil {
		return err
	}
	lines := make([]string, len(raw))
	for i, l := range raw {
		// a TUI paints blank cells as spaces: a line of them is empty
		lines[i] = facts.Sanitize(strings.TrimRight(l, " "), 4000)
	}
	if opts.j.On() {
		return f.PrintJSON(&opts.j, map[string]any{"session": s.Name, "lines": lines})
	}
	for _, l := range lines {
		fmt.Fprintln(f.Out, l)
	}
	return nil
}
