package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/hooks"
	"github.com/git-rally/git-rally/worktree"
)

type worktreeAddOptions struct {
	base string
	j    jsonFlags
}

func newCmdWorktreeAdd(f *factory) *cobra.Command {
	opts := &worktreeAddOptions{}
	c := &cobra.Command{
		Use:   "add <name> [--base <rev>]",
		Short: "Create .rally/worktrees/<name> on a new branch rally/<name> and bind session <name> to it",
		Long: `Create <main checkout>/.rally/worktrees/<name> on a new branch rally/<name>
from --base (default: the main checkout's branch, else main or master), add
.rally/ to .git/info/exclude, and record a session fact. Inside the new
worktree, rally commands act as <tool>@<name>, where <tool> is the identity
given here (or $RALLY_TOOL there). An existing path or branch is refused and
nothing is created; if git fails, whatever was made is removed again.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return runWorktreeAdd(f, opts, args[0]) },
	}
	c.Flags().StringVar(&opts.base, "base", "", "start the branch here (default: the main checkout's branch)")
	addJSONFlags(c, &opts.j)
	return c
}

func runWorktreeAdd(f *factory, opts *worktreeAddOptions, name string) error {
	if err := worktree.CheckName(name); err != nil {
		return err
	}
	r, err := f.Repo()
	if err != nil {
		return err
	}
	if _, err := r.Path(name); err != nil {
		return err
	}
	o, err := f.Identity()
	if err != nil {
		return err
	}
	l, err := f.Ledger()
	if err != nil {
		return err
	}
	if err := excludeRally(r.CommonDir); err != nil {
		return err
	}
	var written []*facts.Fact
	a, err := r.Add(name, opts.base, func(a *worktree.Added) error {
		if _, err := hooks.InstallInWorktree(a.Path); err != nil {
			fmt.Fprintf(f.Err, "git-rally: warning: %v; conflicts with other agents' branches are predicted only by git rally worktree plan\n", err)
		}
		ws, aerr := l.Append(func(st *facts.State, now time.Time) ([]*facts.Fact, error) {
			return []*facts.Fact{{Kind: facts.KindSession, Tool: o.Tool, Session: a.Name, Status: "active",
				Name: a.Name, Path: a.Path, Branch: a.Branch, Base: a.BaseCommit,
				Subject: fmt.Sprintf("worktree %s on %s from %s", a.Name, a.Branch, a.BaseRev)}}, nil
		})
		written = ws
		return aerr
	})
	if err != nil {
		return err
	}
	if opts.j.On() {
		return f.PrintJSON(&opts.j, map[string]any{"facts": cmdutil.RawFacts(written),
			"worktree": worktreeAddJSON{Name: a.Name, Path: a.Path, Branch: a.Branch, Base: a.BaseCommit, BaseRev: a.BaseRev,
				Session: a.Name, Tool: o.Tool}})
	}
	fmt.Fprintf(f.Out, "created %s on branch %s from %s (%s)\n", a.Path, a.Branch, a.BaseRev, shortID(a.BaseCommit))
	fmt.Fprintf(f.Out, "session %s: rally commands inside it act as %s@%s\n", a.Name, o.Tool, a.Name)
	fmt.Fprintf(f.Out, "  cd %s\n", a.Path)
	return nil
}

type worktreeAddJSON struct {
	Name    string `json:"name"`
	Path    string `json:"path"`
	Branch  string `json:"branch"`
	Base    string `json:"base"`
	BaseRev string `json:"base_rev"`
	Session string `json:"session"`
	Tool    string `json:"tool"`
}

func shortID(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
