package cli

import (
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/worktree"
)

type worktreeRemoveOptions struct {
	force bool
	j     jsonFlags
}

func newCmdWorktreeRemove(f *factory) *cobra.Command {
	opts := &worktreeRemoveOptions{}
	c := &cobra.Command{
		Use:   "remove <name> [--force]",
		Short: "Remove an agent worktree and its merged branch; close its session's claims",
		Long: `Remove .rally/worktrees/<name> and, when its work is merged into the base
branch, the branch rally/<name>. A worktree with uncommitted, untracked or
unmerged work is refused (exit 3) unless --force. The worktree of a session whose agent
runs is always refused (exit 3): stop it first. --force drops uncommitted
work but never deletes a branch with unmerged commits: it is kept and named.
A session fact with status removed is appended, and a leave for each owner
of the session closes its claims.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return runWorktreeRemove(f, opts, args[0]) },
	}
	c.Flags().BoolVar(&opts.force, "force", false, "drop uncommitted and untracked work (an unmerged branch is still kept)")
	addJSONFlags(c, &opts.j)
	return c
}

// worktreeExists: the worktree's directory or its branch is there.
func worktreeExists(r *worktree.Repo, name string) bool {
	if p, err := r.Path(name); err == nil {
		if _, err := os.Lstat(p); err == nil {
			return true
		}
	}
	_, err := r.Commit("refs/heads/" + worktree.BranchPrefix + name)
	return err == nil
}

func runWorktreeRemove(f *factory, opts *worktreeRemoveOptions, name string) error {
	if err := worktree.CheckName(name); err != nil {
		return err
	}
	r, err := f.Repo()
	if err != nil {
		return err
	}
	st, err := f.State()
	if err != nil {
		return err
	}
	sess := st.Sessions[name]
	o, err := f.Identity()
	if err != nil {
		if o.Tool == "" && sess == nil && !worktreeExists(r, name) {
			return &usageError{Code: "not-found", Msg: fmt.Sprintf("no such worktree: %q", name), Hint: "git rally worktree list"}
		}
		// Nobody named: the session's own tool records its end.
		if o.Tool != "" || sess == nil {
			return err
		}
		o = facts.Owner{Tool: sess.Tool}
	}
	if sess != nil && liveSessions(st)[name] {
		return &facts.RefusedError{Msg: fmt.Sprintf("session %s runs in worktree %s: removing it would pull the directory from under a live agent", ident(name), ident(sess.Worktree)),
			Hint: fmt.Sprintf("stop it first: git rally stop %s (then git rally worktree remove %s)", ident(name), ident(name))}
	}
	start := ""
	if sess != nil {
		start = sess.Base
	}
	rm, err := r.Remove(name, opts.force, "", start)
	if err != nil {
		return err
	}
	written, closed, err := recordRemoval(f, o, name, rm)
	if err != nil {
		return fmt.Errorf("the worktree is removed but recording it failed: %w", err)
	}
	if opts.j.On() {
		return f.PrintJSON(&opts.j, map[string]any{"facts": cmdutil.RawFacts(written), "removed": worktreeRemoveJSON{
			Name: name, Path: rm.Path, Branch: rm.Branch, WorktreeRemoved: rm.RemovedWorktree, BranchDeleted: rm.DeletedBranch,
			BranchKept: rm.KeptBranch, Dropped: nonNil(rm.Dropped), ClaimsClosed: closed}})
	}
	if rm.RemovedWorktree {
		fmt.Fprintf(f.Out, "removed worktree %s\n", rm.Path)
	}
	if n := len(rm.Dropped); n > 0 {
		fmt.Fprintf(f.Out, "dropped %d uncommitted or untracked path(s)\n", n)
	}
	switch {
	case rm.DeletedBranch:
		fmt.Fprintf(f.Out, "deleted branch %s (merged)\n", rm.Branch)
	case rm.KeptBranch != "":
		fmt.Fprintf(f.Out, "kept branch %s: %s\n", rm.Branch, rm.KeptBranch)
		fmt.Fprintf(f.Out, "  merge it (git merge %s) or delete it yourself (git branch -D %s)\n", rm.Branch, rm.Branch)
	}
	fmt.Fprintf(f.Out, "session %s removed; %s closed\n", name, plural(closed, "claim"))
	return nil
}

// recordRemoval appends the removed session fact and a leave for each
// owner of the session, which closes its claims.
func recordRemoval(f *factory, o facts.Owner, name string, rm *worktree.Removal) ([]*facts.Fact, int, error) {
	l, err := f.Ledger()
	if err != nil {
		return nil, 0, err
	}
	closed := 0
	written, err := l.Append(func(st *facts.State, now time.Time) ([]*facts.Fact, error) {
		// Written as the remover (not as a member of the session, which
		// would make the remover look present in it); the leaves below
		// end the session's own owners.
		rec := &facts.Fact{Kind: facts.KindSession, Tool: o.Tool, Session: o.Session, Status: "removed",
			Name: name, Path: rm.Path, Branch: rm.Branch, Subject: removalSubject(rm)}
		owners := map[facts.Owner]int{}
		if s := st.Sessions[name]; s != nil {
			rec.Base = s.Base
			owners[facts.Owner{Tool: s.Tool, Session: name}] += 0
		} else {
			owners[facts.Owner{Tool: o.Tool, Session: name}] += 0
		}
		for _, c := range st.SortedClaims() {
			if c.Session == name {
				owners[c.Owner()]++
				closed++
			}
		}
		out := []*facts.Fact{rec}
		keys := make([]facts.Owner, 0, len(owners))
		for k := range owners {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i].Tool < keys[j].Tool })
		for _, k := range keys {
			out = append(out, &facts.Fact{Kind: facts.KindLeave, Tool: k.Tool, Session: name,
				Subject: fmt.Sprintf("worktree %s removed; closes %s", name, plural(owners[k], "claim"))})
		}
		return out, nil
	})
	return written, closed, err
}

func removalSubject(rm *worktree.Removal) string {
	switch {
	case rm.DeletedBranch:
		return fmt.Sprintf("worktree %s removed; branch %s deleted (merged)", rm.Name, rm.Branch)
	case rm.KeptBranch != "":
		return fmt.Sprintf("worktree %s removed; branch %s kept", rm.Name, rm.Branch)
	}
	return fmt.Sprintf("worktree %s removed", rm.Name)
}

type worktreeRemoveJSON struct {
	Name            string   `json:"name"`
	Path            string   `json:"path"`
	Branch          string   `json:"branch"`
	WorktreeRemoved bool     `json:"worktree_removed"`
	BranchDeleted   bool     `json:"branch_deleted"`
	BranchKept      string   `json:"branch_kept,omitempty"`
	Dropped         []string `json:"dropped"`
	ClaimsClosed    int      `json:"claims_closed"`
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
