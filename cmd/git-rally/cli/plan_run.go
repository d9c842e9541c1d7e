package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/plan"
	"github.com/git-rally/git-rally/session"
	"github.com/git-rally/git-rally/worktree"
)

type planRunOptions struct {
	agent, commandJSON, backend, base string
	max                               int
	dryRun                            bool
	j                                 jsonFlags
}

func newCmdPlanRun(f *factory) *cobra.Command {
	opts := &planRunOptions{}
	c := &cobra.Command{
		Use:   "run <plan> [--agent <a>] [--max N] [--command-json <argv>] [--dry-run] [--json]",
		Short: "Start a managed session for each ready task, the task taken for it, its packet as the first prompt",
		Long: `For each ready task nobody holds (at most --max), git rally run starts the
task's agent (--agent overrides the plan's "agent") as a managed session in its
own worktree, named after the task (claude-api-01, tool claude_code:api-01).
The launch claims the task's scopes and task:<plan>/<task> for that session in
the same commit that records it, so a task taken meanwhile is refused (exit 3)
and nothing is launched for it. The first prompt is the task packet: the goal,
the scopes it owns, the check, and the exact plan report command. The session
also gets RALLY_PLAN and RALLY_PLAN_TASK.

--command-json runs that argv for every task instead of the agent's own
command; the word {task} in it becomes the packet. --dry-run --json prints one
launch plan per task and changes nothing. Run it again when waiting tasks
become ready.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return runPlanRun(f, opts, args[0], c.Flags().Changed("command-json"))
		},
	}
	c.Flags().StringVar(&opts.agent, "agent", "", "the agent for every task (default: each task's \"agent\")")
	c.Flags().IntVar(&opts.max, "max", 0, "start at most N sessions (0: every ready task)")
	c.Flags().StringVar(&opts.commandJSON, "command-json", "", `the argv to run for each task, {task} the packet: '["./agent.sh","{task}"]'`)
	c.Flags().StringVar(&opts.backend, "backend", "tmux", "terminal backend: tmux (auto means tmux)")
	c.Flags().StringVar(&opts.base, "base", "", "start the worktrees' branches here (default: the main checkout's branch)")
	c.Flags().BoolVar(&opts.dryRun, "dry-run", false, "print the launch plans; change nothing")
	addJSONFlags(c, &opts.j)
	return c
}

type planLaunchJSON struct {
	Task string `json:"task"`
	runPlanJSON
	Prompt string `json:"prompt"`
}

type planRefusedJSON struct {
	Task    string `json:"task"`
	Message string `json:"message"`
}

type planRunJSON struct {
	Plan     string            `json:"plan"`
	DryRun   bool              `json:"dry_run"`
	Launches []planLaunchJSON  `json:"launches"`
	Refused  []planRefusedJSON `json:"refused"`
	Waiting  []string          `json:"waiting"`
	Warnings []string          `json:"warnings,omitempty"`
}

func runPlanRun(f *factory, opts *planRunOptions, name string, commandSet bool) error {
	if opts.max < 0 {
		return usagef("--max %d: want 0 (every ready task) or more", opts.max)
	}
	var argv []string
	if commandSet {
		if err := json.Unmarshal([]byte(opts.commandJSON), &argv); err != nil || argv == nil {
			return &usageError{Msg: "--command-json wants a JSON array of strings", Hint: `--command-json '["./agent.sh","{task}"]'`}
		}
		if err := session.CheckCommand(argv); err != nil {
			return err
		}
	}
	b, err := newBackend(opts.backend)
	if err != nil {
		return err
	}
	st, err := f.State()
	if err != nil {
		return err
	}
	rec, err := plan.Find(st, name)
	if err != nil {
		return err
	}
	if rec.Closed != nil {
		return &facts.RefusedError{Msg: fmt.Sprintf("plan %s is closed", rec.ID()), Hint: "git rally plan status " + rec.ID()}
	}
	board, err := plan.NewBoard(st, rec)
	if err != nil {
		return err
	}
	out := planRunJSON{Plan: rec.ID(), DryRun: opts.dryRun, Launches: []planLaunchJSON{}, Refused: []planRefusedJSON{}, Waiting: []string{}}
	var ready []plan.Task
	for _, v := range board.Tasks {
		switch v.State {
		case plan.Ready:
			ready = append(ready, v.Task)
		case plan.Waiting:
			out.Waiting = append(out.Waiting, v.Task.ID)
		}
	}
	if opts.max > 0 && len(ready) > opts.max {
		ready = ready[:opts.max]
	}
	for _, t := range ready {
		if opts.agent == "" && t.Agent == "" {
			return &usageError{Msg: fmt.Sprintf("task %s names no agent", t.ID), Hint: "git rally plan run " + rec.ID() + " --agent claude"}
		}
	}
	r, err := f.Repo()
	if err != nil {
		return err
	}
	if !opts.dryRun && len(ready) > 0 {
		if err := backendErr(b.Available()); err != nil {
			return err
		}
		for _, t := range ready {
			req, _ := taskRequest(rec.ID(), board, t, opts, argv)
			p, err := session.NewPlan(st, r, b, req)
			if err != nil {
				return err
			}
			if err := p.Preflight(b); err != nil {
				return err
			}
		}
		if err := excludeRally(r.CommonDir); err != nil {
			return err
		}
	}
	for _, t := range ready {
		req, prompt := taskRequest(rec.ID(), board, t, opts, argv)
		p, err := session.NewPlan(st, r, b, req)
		if err != nil {
			return err
		}
		lj := planLaunchJSON{Task: t.ID, Prompt: prompt, runPlanJSON: runPlanJSON{Session: p.Session, Tool: p.Tool, Agent: p.Agent,
			Backend: p.Backend, Target: p.Target, Worktree: p.Worktree, Branch: p.Branch, Base: p.Base, Command: p.Command,
			Env: taskEnv(p, rec.ID(), t.ID), Scopes: p.Scopes, DryRun: opts.dryRun}}
		out.Warnings = append(out.Warnings, baseLacks(r, board, t, p)...)
		if opts.dryRun {
			out.Launches = append(out.Launches, lj)
			continue
		}
		l, err := f.Ledger()
		if err != nil {
			return err
		}
		res, err := session.Launch(l, r, b, p)
		f.Forget()
		if err != nil {
			var re *facts.RefusedError
			var ce *facts.ConflictError
			if errors.As(err, &re) || errors.As(err, &ce) {
				out.Refused = append(out.Refused, planRefusedJSON{Task: t.ID, Message: err.Error()})
				continue
			}
			return backendErr(err)
		}
		lj.Facts, lj.Hooks = cmdutil.RawFacts(res.Facts), res.Hooks
		out.Launches = append(out.Launches, lj)
		if st, err = f.State(); err != nil {
			return err
		}
	}
	if opts.j.On() {
		if err := f.PrintJSON(&opts.j, out); err != nil {
			return err
		}
	} else {
		printPlanRun(f, out)
	}
	for _, w := range out.Warnings {
		fmt.Fprintf(f.Err, "git-rally: warning: %s\n", facts.Sanitize(w, 600))
	}
	if len(out.Refused) > 0 {
		for _, rf := range out.Refused {
			fmt.Fprintf(f.Err, "git-rally: error: task %s not started: %s\n", rf.Task, facts.Sanitize(rf.Message, 400))
		}
		fmt.Fprintf(f.Err, "git-rally: hint: git rally plan status %s\n", rec.ID())
		return &exitError{Code: ExitRefused}
	}
	return nil
}

// taskRequest is the launch of one task: named after it, claiming its
// scopes and its task scope, the packet as the first prompt.
func taskRequest(planID string, b *plan.Board, t plan.Task, opts *planRunOptions, argv []string) (session.Request, string) {
	agent := opts.agent
	if agent == "" {
		agent = t.Agent
	}
	prompt := plan.Packet(b, t)
	req := session.Request{Agent: agent, Name: sessionLabel(t.ID), Base: opts.base, Args: t.Args,
		Scopes:  append(append([]string{}, t.Owns...), facts.TaskScope(planID, t.ID)),
		PassEnv: append(passEnv(), "RALLY_PLAN="+planID, "RALLY_PLAN_TASK="+t.ID)}
	if argv != nil {
		req.Command = make([]string, len(argv))
		for i, a := range argv {
			req.Command[i] = strings.ReplaceAll(a, "{task}", prompt)
		}
	} else {
		req.Task = prompt
	}
	return req, prompt
}

// baseLacks warns when a task starts from a base that does not hold the
// reported work of a task it depends on: the branches merge first.
func baseLacks(r *worktree.Repo, b *plan.Board, t plan.Task, p *session.Plan) []string {
	var out []string
	for _, d := range t.DependsOn {
		dv := b.Task(d)
		if dv == nil || dv.Report == nil || dv.Report.Revision == "" {
			continue
		}
		if ok, err := r.Contains(p.Base, dv.Report.Revision); err == nil && !ok {
			where := dv.Report.Revision
			if dv.Branch != "" {
				where = dv.Branch
			}
			out = append(out, fmt.Sprintf("task %s starts from %s (%s), which lacks the work of %s: merge %s first (the order: git rally worktree plan), or pass --base",
				t.ID, p.BaseRev, shortID(p.Base), d, where))
		}
	}
	return out
}

// sessionLabel makes a task id a session label (lowercase, at most 32).
func sessionLabel(task string) string {
	s := strings.Trim(worktree.SanitizeName(strings.ToLower(task)), "-.")
	if len(s) > 32 {
		s = strings.TrimRight(s[:32], "-.")
	}
	return s
}

func taskEnv(p *session.Plan, planID, task string) map[string]string {
	env := map[string]string{"RALLY_PLAN": planID, "RALLY_PLAN_TASK": task}
	for k, v := range p.Env {
		env[k] = v
	}
	return env
}

func printPlanRun(f *factory, out planRunJSON) {
	verb := "started"
	if out.DryRun {
		verb = "would start"
	}
	for _, l := range out.Launches {
		fmt.Fprintf(f.Out, "%s %s as %s for task %s/%s in %s (%s session %s)\n", verb, l.Agent, l.Tool, out.Plan, l.Task, l.Worktree, l.Backend, l.Target)
		if out.DryRun {
			fmt.Fprintf(f.Out, "  command  %s\n", argvText(l.Command))
		}
	}
	if len(out.Launches) == 0 && len(out.Refused) == 0 {
		fmt.Fprintf(f.Out, "no task of plan %s is ready", out.Plan)
		if len(out.Waiting) > 0 {
			fmt.Fprintf(f.Out, "; waiting: %s", strings.Join(out.Waiting, ", "))
		}
		fmt.Fprintln(f.Out)
	}
	if !out.DryRun && len(out.Launches) > 0 {
		fmt.Fprintf(f.Out, "watch: git rally plan status %s; look: git rally capture <session>\n", out.Plan)
	}
}
