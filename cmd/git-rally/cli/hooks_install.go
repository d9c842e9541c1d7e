package cli

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/hooks"
	"github.com/git-rally/git-rally/worktree"
)

// hostFlags selects the hosts of hooks install, uninstall and status.
type hostFlags struct {
	git, claude, codex, gemini, cursor bool
	mcp                                bool // also rally's MCP server, in each agent host's own MCP configuration
}

func addHostFlags(c *cobra.Command, h *hostFlags) {
	c.Flags().BoolVar(&h.git, "git", false, "the git pre-commit, pre-push and post-commit hooks")
	c.Flags().BoolVar(&h.claude, "claude", false, "Claude Code (.claude/settings.json)")
	c.Flags().BoolVar(&h.codex, "codex", false, "Codex (.codex/hooks.json)")
	c.Flags().BoolVar(&h.gemini, "gemini", false, "Gemini CLI (.gemini/settings.json)")
	c.Flags().BoolVar(&h.cursor, "cursor", false, "Cursor (.cursor/hooks.json; with --mcp its MCP server in .cursor/mcp.json)")
	c.Flags().BoolVar(&h.mcp, "mcp", false, "rally's MCP server too, in each agent host's MCP configuration (.mcp.json, .codex/config.toml, .gemini/settings.json, .cursor/mcp.json)")
}

// hosts returns the selected hosts and whether they were named; no flag
// means git, Claude Code and Codex.
func (h *hostFlags) hosts() ([]string, bool) {
	var out []string
	for _, x := range []struct {
		on   bool
		name string
	}{{h.git, hooks.Git}, {h.claude, hooks.Claude}, {h.codex, hooks.Codex}, {h.gemini, hooks.Gemini}, {h.cursor, hooks.Cursor}} {
		if x.on {
			out = append(out, x.name)
		}
	}
	if len(out) == 0 {
		return hooks.DefaultHosts, false
	}
	return out, true
}

type hooksOptions struct {
	hosts hostFlags
	j     jsonFlags
}

type hookResultJSON struct {
	Host    string   `json:"host"`
	Path    string   `json:"path,omitempty"`
	State   string   `json:"state"`
	Changed bool     `json:"changed"`
	Chained string   `json:"chained,omitempty"`
	Events  []string `json:"events,omitempty"`
	Note    string   `json:"note,omitempty"`
	MCP     string   `json:"mcp_server,omitempty"`
	// problems: why installed hooks will not run yet, each with its fix
	Problems []hookProblemJSON `json:"problems,omitempty"`
}

type hookProblemJSON struct {
	Problem string `json:"problem"`
	Fix     string `json:"fix,omitempty"`
}

func newCmdHooks(f *factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "hooks",
		Short: "Install, remove or show the git pre-commit check and the agent hosts' hooks",
		Long: `git rally hooks installs rally's hooks: a git pre-commit check of the staged
paths against other agents' claims, with a pre-push hook (a ledger push
that would be rejected says to sync) and a post-commit hook (--git), and the hooks of Claude Code
(--claude, .claude/settings.json), Codex (--codex, .codex/hooks.json),
Gemini CLI (--gemini, .gemini/settings.json) and Cursor (--cursor,
.cursor/hooks.json). With no flag, install covers git, Claude Code and
Codex; status and uninstall cover those and every other host rally's lines
(hooks or MCP server) are in. Each hook runs
"git-rally hook <host> <event>" (the binary itself: no git process first;
install changes the "git rally hook" lines of older versions). Status lists, per host, what still stands
between the installed entries and hooks that run (trust, approval, the
directory the host starts in), each with the command that fixes it.

--mcp also registers rally's MCP server ("git-rally mcp", named rally) in
each selected agent host's project MCP configuration: .mcp.json (Claude
Code), .codex/config.toml (Codex), .gemini/settings.json (Gemini CLI),
.cursor/mcp.json (Cursor, --cursor). Its tools: rally_room, rally_claim,
rally_inbox, rally_handoff and more.

Installing twice changes nothing; an existing pre-commit hook keeps running
first; uninstall puts back what was there.`,
	}
	c.AddCommand(newCmdHooksInstall(f), newCmdHooksUninstall(f), newCmdHooksStatus(f))
	return c
}

func newCmdHooksInstall(f *factory) *cobra.Command {
	opts := &hooksOptions{}
	c := &cobra.Command{
		Use:   "install [--git] [--claude] [--codex] [--gemini] [--cursor] [--mcp]",
		Short: "Install rally's hooks (no flag: git, Claude Code and Codex)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if _, err := serverPath(); opts.hosts.mcp && err != nil {
				// The hosts will run `git-rally mcp`, which executes it.
				fmt.Fprintf(f.Err, "git-rally: warning: %s is not installed: the MCP server the hosts start runs in it\n", ServerName)
				fmt.Fprintf(f.Err, "git-rally: hint: go install github.com/git-rally/git-rally/cmd/...@latest\n")
			}
			return runHooks(f, opts, hookOps{installApproved, hooks.InstallMCP, true, false}, func(r hooks.Result) string {
				if r.Changed {
					return "installed"
				}
				return "already installed"
			})
		},
	}
	addHostFlags(c, &opts.hosts)
	addJSONFlags(c, &opts.j)
	return c
}

// installApproved installs a host's hooks; for Codex it then records
// Codex's approval of exactly rally's entries, as Codex's /hooks does
// (the person asked for them by running install), when codex is
// installed; the repository's other hooks still wait for the person.
func installApproved(r *worktree.Repo, host string) (hooks.Result, error) {
	res, err := hooks.Install(r, host)
	if err != nil || host != hooks.Codex || r.WorkTree == "" {
		return res, err
	}
	ap, aerr := hooks.ApproveCodex(r.WorkTree, os.Environ())
	switch {
	case aerr != nil:
		res.Problems = append(res.Problems, hooks.Problem{Problem: "could not record Codex's approval of rally's hooks: " + aerr.Error(),
			Fix: "cd " + r.WorkTree + " && codex   # then /hooks and trust rally's hooks"})
	case ap.Approved > 0:
		if st, err := hooks.Status(r, host); err == nil {
			res.Problems = st.Problems
		}
		res.Changed = true
		if res.Note != "" {
			res.Note += "; "
		}
		res.Note += fmt.Sprintf("recorded Codex's approval of rally's %d hooks in %s, as /hooks does", ap.Approved, ap.Config)
	}
	return res, nil
}

// hookOps are what install, uninstall or status do to a host's hooks and
// to its MCP registration. Without --mcp, status and uninstall still
// cover a registration that is there, so nothing of rally's stays behind.
type hookOps struct {
	hooks, mcp         func(*worktree.Repo, string) (hooks.Result, error)
	install, uninstall bool
}

// runHooks applies the operations to each selected host and prints one
// line per host and part. A host that fails does not stop the others; the
// first error is returned.
func runHooks(f *factory, opts *hooksOptions, ops hookOps, verb func(hooks.Result) string) error {
	r, err := f.Repo()
	if err != nil {
		return err
	}
	hosts, named := opts.hosts.hosts()
	if !named && !ops.install {
		// Status and uninstall with no flag cover every host rally's lines
		// are in, not only the default ones: a host installed with
		// --gemini, --cursor or --mcp is not forgotten.
		hosts = slices.Clone(hosts)
		for _, h := range hooks.AllHosts {
			if !slices.Contains(hosts, h) && r.WorkTree != "" && rallyIn(r, h) {
				hosts = append(hosts, h)
			}
		}
	}
	var out []hookResultJSON
	var errs []error
	for _, h := range hosts {
		if r.WorkTree == "" && h != hooks.Git && !named {
			continue // a bare repository has no worktree for agent settings
		}
		var steps []func(*worktree.Repo, string) (hooks.Result, error)
		if hooks.HasHooks(h) {
			steps = append(steps, ops.hooks)
		} else if !opts.hosts.mcp && ops.install {
			errs = append(errs, fmt.Errorf("%s: rally registers only its MCP server there; add --mcp", h))
			continue
		}
		if slices.Contains(hooks.MCPHosts, h) && (opts.hosts.mcp || !ops.install) {
			// The MCP server goes in after the hooks and out before them, so
			// directories rally made go with the last file in them.
			mcp := func(r *worktree.Repo, h string) (hooks.Result, error) {
				if !opts.hosts.mcp && hooks.HasHooks(h) {
					if st, err := hooks.StatusMCP(r, h); err != nil || st.State == hooks.StateNotInstalled {
						return hooks.Result{}, errNothing
					}
				}
				return ops.mcp(r, h)
			}
			if ops.uninstall {
				steps = append([]func(*worktree.Repo, string) (hooks.Result, error){mcp}, steps...)
			} else {
				steps = append(steps, mcp)
			}
		}
		for _, op := range steps {
			res, err := op(r, h)
			if err == errNothing {
				continue
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", h, err))
				continue
			}
			if res.Host == hooks.Git && (res.State != hooks.StateNotInstalled || res.Changed) && res.Events == nil {
				res.Events = hooks.GitHookNames
			}
			j := hookResultJSON{Host: res.Host, Path: res.Path, State: res.State, Changed: res.Changed,
				Chained: res.Chained, Events: res.Events, Note: res.Note, MCP: res.MCP}
			for _, p := range res.Problems {
				j.Problems = append(j.Problems, hookProblemJSON{Problem: p.Problem, Fix: p.Fix})
			}
			out = append(out, j)
			if !opts.j.On() {
				fmt.Fprintln(f.Out, hookLine(res, verb(res)))
			}
		}
	}
	if opts.j.On() {
		if out == nil {
			out = []hookResultJSON{}
		}
		if err := f.PrintJSON(&opts.j, map[string]any{"hooks": out}); err != nil {
			return err
		}
	}
	return errors.Join(errs...)
}

// rallyIn reports whether any of rally's lines (hooks or MCP server) are
// in a host's files.
func rallyIn(r *worktree.Repo, h string) bool {
	if hooks.HasHooks(h) {
		if st, err := hooks.Status(r, h); err != nil || st.State != hooks.StateNotInstalled {
			return true // an unreadable file is reported, not skipped
		}
	}
	if slices.Contains(hooks.MCPHosts, h) {
		if st, err := hooks.StatusMCP(r, h); err != nil || st.State != hooks.StateNotInstalled {
			return true
		}
	}
	return false
}

// errNothing skips a part with nothing to report.
var errNothing = errors.New("nothing to do")

func hookLine(r hooks.Result, verb string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s %s", r.Host, verb, r.Path)
	if r.Host == hooks.Git && len(r.Events) > 1 {
		// pre-commit, pre-push and post-commit: install and uninstall
		// change all three, so the line names them all
		fmt.Fprintf(&b, " (%s and %s hooks)", strings.Join(r.Events[:len(r.Events)-1], ", "), r.Events[len(r.Events)-1])
	}
	if r.MCP != "" {
		fmt.Fprintf(&b, " (MCP server %s: git-rally mcp)", r.MCP)
	}
	if r.Chained != "" {
		fmt.Fprintf(&b, " (runs %s first)", r.Chained)
	}
	if r.Host != hooks.Git && len(r.Events) > 0 && r.State != hooks.StateNotInstalled {
		fmt.Fprintf(&b, " (%s)", strings.Join(r.Events, ", "))
	}
	if r.Note != "" {
		b.WriteString("; " + r.Note)
	}
	for _, p := range r.Problems {
		b.WriteString("\n  ! " + p.Problem)
		if p.Fix != "" {
			b.WriteString("\n    fix: " + p.Fix)
		}
	}
	return b.String()
}
