package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/session"
)

type runOptions struct {
	name, task, base, commandJSON, backend string
	shared, dryRun, commandSet             bool
	scopes, hostArgs                       []string
	j                                      jsonFlags
}

func newCmdRun(f *factory) *cobra.Command {
	opts := &runOptions{}
	c := &cobra.Command{
		Use:   "run <agent> [--name <label>] [--task <text>] [--base <rev>] [--shared] [--scope <s>]... [--command-json <argv>] [--dry-run] [-- <host args>...]",
		Short: "Start an agent in its own worktree, in a tmux session rally can reach",
		Long: `Start an agent as a managed session. Agents: claude (also claude_code,
claude-code), codex, gemini, opencode (also oc); any other label needs
--command-json. The session is numbered per room (claude-01, tool
claude_code:01; with --name rev: claude-rev-01, claude_code:rev-01) and runs
in .rally/worktrees/<session> on rally/<session> (from --base, default the
main checkout's branch), in the detached tmux session rally-<session> with
RALLY_TOOL, RALLY_SESSION and RALLY_MANAGED=1 set and the host's hooks in
its worktree. When the worktree cannot be made, nothing is launched and
nothing is recorded.

--shared runs it in the main checkout instead (a shared-branch-hazard
risk is recorded when someone else works there). --scope claims before
the launch (refused: exit 3, nothing launched). --task is the agent's first
prompt. --command-json is the literal argv to run, a JSON array of strings,
no shell. --dry-run --json prints the launch plan and changes nothing.

Words after "--" are the host's own arguments, added to its command line
(before the first prompt with --task): git rally run codex --task "..." --
-m gpt-5.5. The session gets the environment of this command (API keys,
base URLs, RALLY_HOOK_STRICT), whatever a running tmux server holds. A
host that is not on PATH is refused (exit 1) before anything is made.
How each host is launched and configured: docs/hosts.md.`,
		Args: func(c *cobra.Command, args []string) error {
			n := len(args)
			if d := c.ArgsLenAtDash(); d >= 0 {
				n = d
			}
			if n != 1 {
				return &usageError{Msg: fmt.Sprintf("run takes one agent, then host arguments after \"--\" (got %d before it)", n),
					Hint: "git rally run codex --task \"...\" -- -m gpt-5.5"}
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.commandSet = c.Flags().Changed("command-json")
			if d := c.ArgsLenAtDash(); d >= 0 {
				opts.hostArgs = args[d:]
			}
			return runRun(f, opts, args[0])
		},
	}
	c.Flags().StringVar(&opts.name, "name", "", "a label in the session id: claude-<label>-01")
	c.Flags().StringVar(&opts.task, "task", "", "the agent's first prompt")
	c.Flags().StringVar(&opts.base, "base", "", "start the worktree's branch here (default: the main checkout's branch)")
	c.Flags().BoolVar(&opts.shared, "shared", false, "run in the main checkout instead of a worktree")
	c.Flags().StringArrayVar(&opts.scopes, "scope", nil, "claim this scope for the session before it starts (repeat)")
	c.Flags().StringVar(&opts.commandJSON, "command-json", "", `the argv to run, as a JSON array: '["./agent.sh","--fast"]'`)
	c.Flags().StringVar(&opts.backend, "backend", "tmux", "terminal backend: tmux (auto means tmux)")
	c.Flags().BoolVar(&opts.dryRun, "dry-run", false, "print the launch plan; change nothing")
	addJSONFlags(c, &opts.j)
	return c
}

type runPlanJSON struct {
	Session  string            `json:"session"`
	Tool     string            `json:"tool"`
	Agent    string            `json:"agent"`
	Backend  string            `json:"backend"`
	Target   string            `json:"target"`
	Worktree string            `json:"worktree"`
	Branch   string            `json:"branch"`
	Base     string            `json:"base"`
	Command  []string          `json:"command"`
	Env      map[string]string `json:"env"`
	Shared   bool              `json:"shared"`
	Scopes   []string          `json:"scopes,omitempty"`
	DryRun   bool              `json:"dry_run"`
	Hooks    []string          `json:"hooks,omitempty"`
	Facts    []json.RawMessage `json:"facts,omitempty"`
	// After the launch: live, or exited when the host died at once.
	State      string `json:"state,omitempty"`
	ExitStatus *int   `json:"exit_status,omitempty"`
	LastLine   string `json:"last_line,omitempty"`
}

// runExited reports a session whose host ended within run's startup
// window: the launch plan with state exited, exit_status and last_line
// (--json), an error naming the exit and the last line, exit 1.
func runExited(f *factory, opts *runOptions, out runPlanJSON, end session.Ending, tail []string) error {
	status := end.Status
	out.State, out.ExitStatus, out.LastLine = session.StateExited, &status, facts.Sanitize(end.LastLine, 300)
	how := fmt.Sprintf("exit status %d", end.Status)
	if end.Signal > 0 {
		how = fmt.Sprintf("signal %d", end.Signal)
	}
	msg := fmt.Sprintf("%s exited at once (%s)", out.Session, how)
	if out.LastLine != "" {
		msg += ": " + out.LastLine
	}
	err := &facts.FailedError{Err: fmt.Errorf("%s", msg),
		Hint: fmt.Sprintf("its output: git rally capture %s; clear it: git rally stop %s", out.Session, out.Session)}
	if opts.j.On() {
		if perr := f.PrintJSON(&opts.j, out); perr != nil {
			return perr
		}
		return &cmdutil.AnsweredError{Err: err}
	}
	// The last line is often a footer ("try --help"): the lines before it
	// say what went wrong.
	if len(tail) > 1 {
		fmt.Fprintf(f.Err, "git-rally: note: the last output of %s:\n", out.Session)
		for _, l := range tail {
			fmt.Fprintf(f.Err, "  | %s\n", l)
		}
	}
	return err
}

// lastLines are the last n non-empty lines of a terminal, sanitized,
// without tmux's "Pane is dead" line.
func lastLines(lines []string, n int) []string {
	var out []string
	for i := len(lines) - 1; i >= 0 && len(out) < n; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "Pane is dead") {
			continue
		}
		out = append([]string{facts.Sanitize(l, 300)}, out...)
	}
	return out
}

func runRun(f *factory, opts *runOptions, agent string) error {
	b, err := newBackend(opts.backend)
	if err != nil {
		return err
	}
	req := session.Request{Agent: agent, Name: opts.name, Task: opts.task, Base: opts.base, Shared: opts.shared, Args: opts.hostArgs, PassEnv: passEnv()}
	if opts.commandSet {
		if err := json.Unmarshal([]byte(opts.commandJSON), &req.Command); err != nil || req.Command == nil {
			return &usageError{Msg: "--command-json wants a JSON array of strings", Hint: `--command-json '["./agent.sh","--flag"]'`}
		}
	}
	if len(opts.scopes) > 0 {
		if req.Scopes, err = parseScopes(f.Factory, opts.scopes); err != nil {
			return err
		}
	}
	r, err := f.Repo()
	if err != nil {
		return err
	}
	st, err := f.State()
	if err != nil {
		return err
	}
	p, err := session.NewPlan(st, r, b, req)
	if err != nil {
		return err
	}
	out := runPlanJSON{Session: p.Session, Tool: p.Tool, Agent: p.Agent, Backend: p.Backend, Target: p.Target,
		Worktree: p.Worktree, Branch: p.Branch, Base: p.Base, Command: p.Command, Env: p.Env, Shared: p.Shared,
		Scopes: p.Scopes, DryRun: opts.dryRun}
	if opts.dryRun {
		if opts.j.On() {
			return f.PrintJSON(&opts.j, out)
		}
		fmt.Fprintf(f.Out, "would run %s as %s (session %s) in %s session %s\n", p.Agent, p.Tool, p.Session, p.Backend, p.Target)
		printPlanPlace(f, p)
		fmt.Fprintf(f.Out, "  command  %s\n", argvText(p.Command))
		return nil
	}
	if err := backendErr(b.Available()); err != nil {
		return err
	}
	if err := p.Preflight(b); err != nil {
		return err
	}
	if !p.Shared {
		if err := excludeRally(r.CommonDir); err != nil {
			return err
		}
	}
	l, err := f.Ledger()
	if err != nil {
		return err
	}
	res, err := session.Launch(l, r, b, p)
	f.Forget()
	if err != nil {
		return backendErr(err)
	}
	out.Facts, out.Hooks = cmdutil.RawFacts(res.Facts), res.Hooks
	// A host that dies at once (a binary that exits 1, a host refusing
	// its arguments) is an error, not "started".
	if up := session.WatchStartup(l, b, res, p.Window()); up.Exited {
		lines, _ := b.Capture(p.Target, 200)
		return runExited(f, opts, out, up.Ending, lastLines(lines, 6))
	}
	out.State = session.StateLive
	if opts.j.On() {
		return f.PrintJSON(&opts.j, out)
	}
	fmt.Fprintf(f.Out, "started %s as %s (session %s) in %s session %s\n", p.Agent, p.Tool, p.Session, p.Backend, p.Target)
	printPlanPlace(f, p)
	for _, n := range res.Notes {
		fmt.Fprintf(f.Err, "git-rally: note: %s\n", facts.Sanitize(n, 600))
	}
	for _, fa := range res.Facts {
		if fa.Kind == "risk" {
			fmt.Fprintf(f.Err, "git-rally: warning: %s: %s\n", fa.Subject, fa.Body)
		}
	}
	fmt.Fprintf(f.Out, "  look     git rally capture %s\n  attach   git rally attach %s\n  stop     git rally stop %s\n", p.Session, p.Session, p.Session)
	return nil
}

func printPlanPlace(f *factory, p *session.Plan) {
	if p.Shared {
		fmt.Fprintf(f.Out, "  checkout %s (shared) on %s\n", p.Worktree, p.Branch)
	} else {
		fmt.Fprintf(f.Out, "  worktree %s on %s from %s (%s)\n", p.Worktree, p.Branch, p.BaseRev, shortID(p.Base))
	}
	if len(p.Scopes) > 0 {
		fmt.Fprintf(f.Out, "  claims   %s\n", strings.Join(p.Scopes, " "))
	}
}

// argvText shows an argv the way a shell user would type it.
func argvText(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:@%+,") == "" {
			parts[i] = a
		} else {
			parts[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(parts, " ")
}
