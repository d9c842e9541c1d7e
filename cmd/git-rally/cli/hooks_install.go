package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/hooks"
	"github.com/git-rally/git-rally/worktree"
)

func init() { extraCommands = append(extraCommands, newCmdHooks, newCmdHook) }

// hostFlags selects the hosts of hooks install, uninstall and status.
type hostFlags struct {
	git, claude, codex, gemini, cursor bool
}

func addHostFlags(c *cobra.Command, h *hostFlags) {
	c.Flags().BoolVar(&h.git, "git", false, "the git pre-commit hook")
	c.Flags().BoolVar(&h.claude, "claude", false, "Claude Code (.claude/settings.json)")
	c.Flags().BoolVar(&h.codex, "codex", false, "Codex (.codex/hooks.json)")
	c.Flags().BoolVar(&h.gemini, "gemini", false, "Gemini CLI (.gemini/settings.json)")
	c.Flags().BoolVar(&h.cursor, "cursor", false, "Cursor (.cursor/hooks.json)")
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
paths against other agents' claims (--git), and the hooks of Claude Code
(--claude, .claude/settings.json), Codex (--codex, .codex/hooks.json),
Gemini CLI (--gemini, .gemini/settings.json) and Cursor (--cursor,
.cursor/hooks.json). With no flag: git, Claude Code and Codex. Each hook runs
"git rally hook <host> <event>". Status lists, per host, what still stands
between the installed entries and hooks that run (trust, approval, the
directory the host starts in), each with the command that fixes it.

Installing twice changes nothing; an existing pre-commit hook keeps running
first; uninstall puts back what was there.`,
	}
	c.AddCommand(newCmdHooksInstall(f), newCmdHooksUninstall(f), newCmdHooksStatus(f))
	return c
}

func newCmdHooksInstall(f *factory) *cobra.Command {
	opts := &hooksOptions{}
	c := &cobra.Command{
		Use:   "install [--git] [--claude] [--codex] [--gemini] [--cursor]",
		Short: "Install rally's hooks (no flag: git, Claude Code and Codex)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return runHooks(f, opts, hooks.Install, func(r hooks.Result) string {
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

// runHooks applies op to each selected host and prints one line per host.
// A host that fails does not stop the others; the first error is returned.
func runHooks(f *factory, opts *hooksOptions, op func(*worktree.Repo, string) (hooks.Result, error), verb func(hooks.Result) string) error {
	r, err := f.Repo()
	if err != nil {
		return err
	}
	hosts, named := opts.hosts.hosts()
	var out []hookResultJSON
	var errs []error
	for _, h := range hosts {
		if r.WorkTree == "" && h != hooks.Git && !named {
			continue // a bare repository has no worktree for agent settings
		}
		res, err := op(r, h)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", h, err))
			continue
		}
		j := hookResultJSON{Host: res.Host, Path: res.Path, State: res.State, Changed: res.Changed,
			Chained: res.Chained, Events: res.Events, Note: res.Note}
		for _, p := range res.Problems {
			j.Problems = append(j.Problems, hookProblemJSON{Problem: p.Problem, Fix: p.Fix})
		}
		out = append(out, j)
		if !opts.j.on() {
			fmt.Fprintln(f.out, hookLine(res, verb(res)))
		}
	}
	if opts.j.on() {
		if out == nil {
			out = []hookResultJSON{}
		}
		if err := f.printJSON(&opts.j, map[string]any{"hooks": out}); err != nil {
			return err
		}
	}
	return errors.Join(errs...)
}

func hookLine(r hooks.Result, verb string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s %s", r.Host, verb, r.Path)
	if r.Chained != "" {
		fmt.Fprintf(&b, " (runs %s first)", r.Chained)
	}
	if len(r.Events) > 0 && r.State != hooks.StateNotInstalled {
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
