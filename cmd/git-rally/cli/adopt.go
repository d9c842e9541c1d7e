package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"github.com/git-rally/git-rally/session"
)

type adoptOptions struct {
	tmux, agent, backend string
	j                    jsonFlags
}

func newCmdAdopt(f *factory) *cobra.Command {
	opts := &adoptOptions{}
	c := &cobra.Command{
		Use:   "adopt <name> --tmux <target> [--agent <a>] [--tool <t>]",
		Short: "Record an existing tmux pane as a managed session (no worktree), so inject, capture and stop work on it",
		Long: `Record an existing tmux pane (any tmux target: session, session:window.pane,
or a pane id such as %3) as the managed session <name>. Rally keeps the pane
id, so the pane is found again after windows move. Its tool is --tool, else
<agent family>:<name> (codex:<name>) with --agent, else <name>. No worktree
is made; stop ends the pane.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return runAdopt(f, opts, args[0]) },
	}
	c.Flags().StringVar(&opts.tmux, "tmux", "", "the tmux target to adopt")
	c.Flags().StringVar(&opts.agent, "agent", "", "the agent running there (claude, codex, gemini, opencode, or a label)")
	c.Flags().StringVar(&opts.backend, "backend", "tmux", "terminal backend: tmux")
	addJSONFlags(c, &opts.j)
	return c
}

func runAdopt(f *factory, opts *adoptOptions, name string) error {
	if opts.tmux == "" {
		return &usageError{Msg: "adopt needs --tmux <target>", Hint: "tmux list-panes -a -F '#{session_name}:#{window_index}.#{pane_index}'"}
	}
	b, err := newBackend(opts.backend)
	if err != nil {
		return err
	}
	l, err := f.Ledger()
	if err != nil {
		return err
	}
	fs, err := session.Adopt(l, b, name, opts.tmux, opts.agent, f.ToolFlag)
	f.Forget()
	if err != nil {
		return backendErr(err)
	}
	if opts.j.On() {
		return f.PrintJSON(&opts.j, map[string]any{"session": name, "tool": fs[0].Tool, "target": fs[0].Target, "facts": cmdutil.RawFacts(fs)})
	}
	fmt.Fprintf(f.Out, "adopted %s pane %s as session %s (%s)\n", b.Name(), ident(fs[0].Target), ident(name), ident(fs[0].Tool))
	fmt.Fprintf(f.Out, "  look     git rally capture %s\n  deliver  git rally inject %s --handoff <id>\n  stop     git rally stop %s\n", name, name, name)
	return nil
}
