package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/session"
)

type stopOptions struct {
	dryRun bool
	j      jsonFlags
}

func newCmdStop(f *factory) *cobra.Command {
	opts := &stopOptions{}
	c := &cobra.Command{
		Use:   "stop <session> [--dry-run]",
		Short: "End a managed session's terminal, record it stopped and release its claims; the worktree stays",
		Long: `End the session's tmux session, append its session fact with status stopped
and release the claims it holds, in one commit. Its worktree and branch
stay; the output says how to merge and remove them. A session whose
terminal is already gone is closed in the ledger without touching any
process. A session is named by its id, its tool or a unique prefix.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return runStop(f, opts, args[0]) },
	}
	c.Flags().BoolVar(&opts.dryRun, "dry-run", false, "say what would happen; change nothing")
	addJSONFlags(c, &opts.j)
	return c
}

func runStop(f *factory, opts *stopOptions, name string) error {
	_, s, err := resolveSession(f, name)
	if err != nil {
		return err
	}
	b, err := newBackend(s.Backend)
	if err != nil {
		return err
	}
	l, err := f.Ledger()
	if err != nil {
		return err
	}
	res, err := session.Stop(l, b, s, opts.dryRun)
	f.Forget()
	if err != nil {
		return err
	}
	if res.Already {
		fmt.Fprintf(f.Err, "git-rally: note: session %s is stopped already; nothing written\n", ident(s.Name))
	}
	prunable, why := stopPrunable(f, s)
	if opts.j.On() {
		return f.PrintJSON(&opts.j, map[string]any{"session": s.Name, "was_live": res.WasLive, "released": nonNil(res.Released),
			"dry_run": opts.dryRun, "worktree": s.Path, "branch": s.Branch, "facts": cmdutil.RawFacts(res.Facts),
			"prunable": prunable})
	}
	verb := map[bool]string{true: "would stop", false: "stopped"}[opts.dryRun]
	if res.Already {
		return nil
	}
	what := "its terminal was gone already; closed in the ledger"
	// An adopted pane (%3) is a pane, not a session of its own.
	unit := " session "
	if strings.HasPrefix(s.Target, "%") {
		unit = " pane "
	}
	if res.WasLive && opts.dryRun {
		what = "would end " + s.Backend + unit + ident(s.Target)
	} else if res.WasLive {
		what = "ended " + s.Backend + unit + ident(s.Target)
	}
	fmt.Fprintf(f.Out, "%s %s (%s): %s, %s released\n", verb, ident(s.Name), ident(s.Tool), what, plural(len(res.Released), "claim"))
	if s.Path != "" {
		fmt.Fprintf(f.Out, "the worktree stays: %s on %s\n", ident(s.Path), ident(s.Branch))
		fmt.Fprintf(f.Out, "  merge it   git merge %s   (from the main checkout; see git rally worktree plan)\n", ident(s.Branch))
		fmt.Fprintf(f.Out, "  remove it  git rally worktree remove %s\n", ident(s.Name))
		if prunable {
			fmt.Fprintf(f.Out, "  it is clean and merged: git rally worktree prune --apply removes it now\n")
		} else {
			fmt.Fprintf(f.Out, "  git rally worktree prune --apply removes it once %s\n", why)
		}
	}
	return nil
}

// stopPrunable says whether a stopped session's worktree can be pruned
// now (clean, its branch merged), or what it waits for.
func stopPrunable(f *factory, s *facts.Fact) (bool, string) {
	if s.Path == "" {
		return false, "it has a worktree"
	}
	r, err := f.Repo()
	if err != nil {
		return false, "its branch is merged and its work committed"
	}
	in, err := r.Inspect(s.Name, "", s.Base)
	if err != nil {
		return false, "its branch is merged and its work committed"
	}
	switch {
	case len(in.Dirty) > 0 && !in.Merged:
		return false, "its work is committed and " + in.Branch + " is merged (git merge " + in.Branch + ")"
	case len(in.Dirty) > 0:
		return false, "its uncommitted work is committed or discarded"
	case !in.Merged:
		return false, in.Branch + " is merged (git merge " + in.Branch + ")"
	}
	return true, ""
}
