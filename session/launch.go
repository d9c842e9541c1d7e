package session

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/hooks"
	"github.com/git-rally/git-rally/ledger"
	"github.com/git-rally/git-rally/worktree"
)

// Statuses of session facts.
const (
	StatusLive    = "live"
	StatusStopped = "stopped"
)

// States of a session as `sessions` shows it.
const (
	StateLive    = "live"    // its terminal exists
	StateExited  = "exited"  // its terminal is gone, nobody stopped it
	StateStopped = "stopped" // stopped through rally
)

// HazardSubject is the subject of the risk a --shared launch appends when
// someone else works in that checkout.
const HazardSubject = "shared-branch-hazard"

// Request is what `run` was asked for.
type Request struct {
	Agent   string   // name or alias, or a label with Command
	Name    string   // --name
	Task    string   // --task, the first prompt
	Base    string   // --base ("" = the main checkout's branch)
	Shared  bool     // run in the main checkout instead of a worktree
	Scopes  []string // canonical scopes to claim before launch
	Command []string // --command-json (nil: the host's own command)
	Args    []string // host args (after "--"): appended to the host's command line
	PassEnv []string // KEY=VALUE the terminal gets besides rally's: the caller's environment
}

// Plan is a launch worked out, nothing done yet.
type Plan struct {
	Session  string
	Tool     string
	Agent    string
	Backend  string
	Target   string
	Worktree string
	Branch   string
	Base     string // commit
	BaseRev  string // what it was resolved from
	Command  []string
	Env      map[string]string // rally's variables
	Shared   bool
	Scopes   []string
	Hooks    string // hooks host, "" none
	Task     string
	passEnv  []string
	install  string // how to install the host program
}

// Owner is who the session's facts and claims belong to.
func (p *Plan) Owner() facts.Owner { return facts.Owner{Tool: p.Tool, Session: p.Session} }

// NewPlan works out ids, place and command for a request against the room
// as st has it. It changes nothing.
func NewPlan(st *facts.State, r *worktree.Repo, b Backend, req Request) (*Plan, error) {
	if req.Command != nil {
		if err := CheckCommand(req.Command); err != nil {
			return nil, err
		}
		if req.Task != "" {
			return nil, &facts.UsageError{Msg: "--command-json and --task do not combine: the command is run as given",
				Hint: "put the first prompt into the command's own arguments"}
		}
	}
	h, err := Agent(req.Agent, req.Command != nil)
	if err != nil {
		return nil, err
	}
	if err := facts.CheckText("task", req.Task, facts.MaxBody); err != nil {
		return nil, err
	}
	id, tool, err := IDs(st, h, req.Name)
	if err != nil {
		return nil, err
	}
	p := &Plan{Session: id, Tool: tool, Agent: h.Agent, Backend: b.Name(), Target: TerminalName(id),
		Shared: req.Shared, Scopes: req.Scopes, Hooks: h.Hooks, Task: req.Task, passEnv: req.PassEnv}
	if err := checkArgs(req.Args); err != nil {
		return nil, err
	}
	p.Command = req.Command
	if p.Command == nil {
		p.Command = h.Command(req.Task, req.Args...)
		p.install = h.Install
	} else {
		p.Command = append(append([]string(nil), req.Command...), req.Args...)
	}
	p.Env = map[string]string{"RALLY_TOOL": tool, "RALLY_SESSION": id, "RALLY_MANAGED": "1"}
	main := r.MainWorkTree()
	if main == "" {
		return nil, &facts.UsageError{Msg: "a bare repository has no checkout to run an agent in",
			Hint: "run git rally run in a repository with a working tree"}
	}
	if req.Shared {
		if req.Base != "" {
			return nil, &facts.UsageError{Msg: "--shared runs in the main checkout as it is; --base applies to a new worktree"}
		}
		p.Worktree = main
		p.Branch, _ = currentBranch(r)
		p.BaseRev = "HEAD"
		p.Base, _ = r.Commit("HEAD")
		return p, nil
	}
	if p.Worktree, err = r.Path(id); err != nil {
		return nil, err
	}
	p.Branch = worktree.BranchPrefix + id
	p.BaseRev = req.Base
	if p.BaseRev == "" {
		if p.BaseRev, err = r.DefaultBase(); err != nil {
			return nil, err
		}
	}
	if p.Base, err = r.Commit(p.BaseRev); err != nil {
		return nil, err
	}
	return p, nil
}

func currentBranch(r *worktree.Repo) (string, error) {
	b, err := r.DefaultBase()
	return b, err
}

// env is the session's environment: the caller's (passEnv), then
// rally's variables; a later value of a name replaces an earlier one.
func (p *Plan) env() []string {
	all := append([]string(nil), p.passEnv...)
	for _, k := range []string{"RALLY_TOOL", "RALLY_SESSION", "RALLY_MANAGED"} {
		all = append(all, k+"="+p.Env[k])
	}
	at := map[string]int{}
	var out []string
	for _, kv := range all {
		k, _, _ := strings.Cut(kv, "=")
		if i, ok := at[k]; ok {
			out[i] = kv
			continue
		}
		at[k] = len(out)
		out = append(out, kv)
	}
	return out
}

// checkArgs validates host args: no NUL (an empty one is passed on).
func checkArgs(args []string) error {
	for i, a := range args {
		if strings.ContainsRune(a, 0) {
			return &facts.UsageError{Msg: fmt.Sprintf("host argument %d contains NUL", i+1)}
		}
	}
	return nil
}

// Preflight checks that the program the session runs can be found on
// the PATH it gets (exit 1 with an install hint when not), before
// anything is made or written. A program named by a relative path is
// looked for when the session starts, in its worktree. Only a backend
// that runs programs (RunsPrograms) is checked for.
func (p *Plan) Preflight(b Backend) error {
	if r, ok := b.(interface{ RunsPrograms() bool }); !ok || !r.RunsPrograms() {
		return nil // a stand-in terminal (the demo's) runs nothing
	}
	prog := p.Command[0]
	if strings.Contains(prog, "/") && !filepath.IsAbs(prog) {
		return nil
	}
	path := os.Getenv("PATH")
	for _, kv := range p.passEnv {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	if findProgram(prog, path) {
		return nil
	}
	hint := "install it, or put it on PATH, then run it again"
	if p.install != "" {
		hint = p.install + "   (then run it again)"
	}
	return &facts.FailedError{Err: fmt.Errorf("%s is not installed: no %s on PATH, so %s cannot start; nothing was started or recorded", facts.Sanitize(prog, 200), facts.Sanitize(prog, 200), p.Session), Hint: hint}
}

// findProgram looks for an executable prog as exec.LookPath does, on the
// given PATH.
func findProgram(prog, path string) bool {
	ok := func(f string) bool {
		fi, err := os.Stat(f)
		return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
	}
	if strings.Contains(prog, "/") {
		return ok(prog)
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		if ok(filepath.Join(dir, prog)) {
			return true
		}
	}
	return false
}

func (p *Plan) sessionFact() *facts.Fact {
	f := &facts.Fact{Kind: facts.KindSession, Tool: p.Tool, Session: p.Session, Name: p.Session, Status: StatusLive,
		Agent: p.Agent, Backend: p.Backend, Target: p.Target, Worktree: p.Worktree, Branch: p.Branch, Base: p.Base,
		Command: p.Command}
	if !p.Shared {
		f.Path = p.Worktree // an agent worktree, as `worktree add` records it
	}
	f.Subject = fmt.Sprintf("run %s as %s in %s", p.Agent, p.Tool, p.Worktree)
	return f
}

// Launched is a session that runs.
type Launched struct {
	Plan  *Plan
	Facts []*facts.Fact
	Hooks []string // files of host hooks installed for its worktree
	Notes []string // what the person should know (an approval recorded or not)
}

// Launch carries out a plan: the worktree (unless shared), the host's
// hooks in it, then one append that claims the scopes, records the
// session (and the shared-branch hazard) and, inside the ledger lock
// once every rule passed, starts the terminal. Nothing runs and nothing
// is recorded when any step fails; a worktree made for it is removed.
func Launch(l *ledger.Ledger, r *worktree.Repo, b Backend, p *Plan) (*Launched, error) {
	if err := b.Available(); err != nil {
		return nil, err
	}
	if err := p.Preflight(b); err != nil {
		return nil, err
	}
	live, err := b.Live()
	if err != nil {
		return nil, err
	}
	if live[p.Target] {
		return nil, &facts.RefusedError{Msg: fmt.Sprintf("a %s session %s exists already", b.Name(), p.Target),
			Hint: fmt.Sprintf("git rally adopt %s --tmux %s, or end it: tmux kill-session -t %s", p.Session, p.Target, p.Target)}
	}
	// Refuse a claim conflict before anything is made.
	if len(p.Scopes) > 0 {
		st, err := l.Read()
		if err != nil {
			return nil, err
		}
		if _, err := p.claim()(st, l.Now().UTC()); err != nil {
			return nil, err
		}
	}
	out := &Launched{Plan: p}
	start := func(dir string) error {
		fs, err := l.Append(func(st *facts.State, now time.Time) ([]*facts.Fact, error) {
			var fs []*facts.Fact
			if len(p.Scopes) > 0 {
				cs, err := p.claim()(st, now)
				if err != nil {
					return nil, err
				}
				fs = append(fs, cs...)
			}
			fs = append(fs, p.sessionFact())
			if p.Shared {
				if who := sharers(st, live, p, now); len(who) > 0 {
					fs = append(fs, &facts.Fact{Kind: facts.KindRisk, Tool: p.Tool, Session: p.Session, Subject: HazardSubject,
						Severity: "warn", Scopes: branchScope(p.Branch),
						Body: fmt.Sprintf("%s runs in the shared checkout %s on branch %s, where %s work too: edits and commits can collide", p.Tool, p.Worktree, p.Branch, joinAnd(who))})
				}
			}
			for _, f := range fs {
				if err := f.Validate(); err != nil {
					return nil, err
				}
			}
			// Every rule passed: start it. An error from here on is
			// a failed write, handled below.
			if err := b.Start(p.Target, dir, p.env(), p.Command); err != nil {
				return nil, fmt.Errorf("starting the %s session: %w", b.Name(), err)
			}
			return fs, nil
		})
		if err != nil {
			if l2, lerr := b.Live(); lerr == nil && l2[p.Target] {
				b.Kill(p.Target)
			}
			return err
		}
		out.Facts = fs
		return nil
	}
	if p.Shared {
		return out, start(p.Worktree)
	}
	_, err = r.Add(p.Session, p.Base, func(a *worktree.Added) error {
		if p.Hooks != "" {
			wr, err := worktree.Discover(a.Path)
			if err != nil {
				return err
			}
			res, err := hooks.Install(wr, p.Hooks)
			if err != nil {
				return fmt.Errorf("installing the %s hooks: %w", p.Hooks, err)
			}
			if res.Path != "" {
				if !filepath.IsAbs(res.Path) {
					res.Path = filepath.Join(a.Path, res.Path)
				}
				local := res.Path
				if res.Local != "" {
					// Codex: the main checkout's file is the one it runs
					local = res.Local
					out.Hooks = append(out.Hooks, res.Path)
				}
				if err := worktree.KeepLocal(a.Path, []string{local}); err != nil {
					return fmt.Errorf("keeping %s out of git: %w", local, err)
				}
				out.Hooks = append(out.Hooks, local)
			}
			if p.Hooks == hooks.Codex {
				// The person asked for this session: record Codex's
				// approval of rally's own entries, as /hooks does.
				ap, err := hooks.ApproveCodex(a.Path, p.env())
				switch {
				case err != nil:
					out.Notes = append(out.Notes, "could not record Codex's approval of rally's hooks: "+err.Error()+" (approve them in codex: /hooks)")
				case ap.Approved > 0:
					out.Notes = append(out.Notes, fmt.Sprintf("recorded Codex's approval of rally's %d hooks in %s", ap.Approved, ap.Config))
				}
			}
		}
		// Conflicts with the other agents are caught when a commit makes
		// them (SPEC §16); a worktree without the hook still works.
		if hp, err := hooks.InstallInWorktree(a.Path); err == nil && hp != "" {
			out.Hooks = append(out.Hooks, hp)
		}
		return start(a.Path)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (p *Plan) claim() facts.AppendFunc {
	return facts.Claim(facts.ClaimRequest{Owner: p.Owner(), Scopes: p.Scopes, Access: facts.Exclusive,
		Subject: "claimed by git rally run " + p.Session})
}

// sharers are who else works in the checkout a shared session runs in:
// live shared sessions there, and active peers that are not bound to a
// worktree of their own.
func sharers(st *facts.State, live map[string]bool, p *Plan, now time.Time) []string {
	var who []string
	seen := map[string]bool{}
	for _, f := range st.Sessions {
		if f.Name == p.Session || f.Backend == "" || f.Status == StatusStopped || f.Worktree != p.Worktree || !live[f.Target] {
			continue
		}
		who = append(who, f.Tool)
		seen[f.Tool] = true
	}
	for _, v := range st.Room(now).Peers {
		if v.State != facts.Active || seen[v.Tool] || v.Tool == p.Tool {
			continue
		}
		if s := st.Sessions[v.Session]; s != nil && s.Path != "" && s.Path != p.Worktree {
			continue // works in its own worktree
		}
		who = append(who, v.Tool)
		seen[v.Tool] = true
	}
	return who
}

func branchScope(b string) []string {
	if b == "" {
		return nil
	}
	return []string{"branch:" + b}
}

func joinAnd(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	s := ""
	for i, x := range xs {
		switch {
		case i == 0:
			s = x
		case i == len(xs)-1:
			s += " and " + x
		default:
			s += ", " + x
		}
	}
	return s
}
