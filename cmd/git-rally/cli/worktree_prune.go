package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/worktree"
)

type worktreePruneOptions struct {
	apply bool
	j     jsonFlags
}

func newCmdWorktreePrune(f *factory) *cobra.Command {
	opts := &worktreePruneOptions{}
	c := &cobra.Command{
		Use:   "prune [--apply]",
		Short: "List (and with --apply remove) finished sessions' worktrees whose branch is merged",
		Long: `A rally worktree can be pruned when its managed session has stopped or
exited, it has no uncommitted or untracked work, and its branch is merged
into its base. Without --apply prune only lists; with --apply it removes
each such worktree and its branch as worktree remove does (recording the
session removed and closing its claims). A live session's worktree, a dirty
one, an unmerged one and one with no managed session are never pruned:
they are listed with the reason they are kept.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error { return runWorktreePrune(f, opts) },
	}
	c.Flags().BoolVar(&opts.apply, "apply", false, "remove the worktrees that can be pruned")
	addJSONFlags(c, &opts.j)
	return c
}

type pruneRowJSON struct {
	Name         string   `json:"name"`
	Path         string   `json:"path"`
	Branch       string   `json:"branch"`
	Session      string   `json:"session"`
	SessionState string   `json:"session_state"`
	Dirty        bool     `json:"dirty"`
	Merged       bool     `json:"merged"`
	Unmerged     int      `json:"unmerged"`
	Action       string   `json:"action"` // prune or keep
	Reasons      []string `json:"reasons"`
	Removed      bool     `json:"removed"`
	BranchKept   string   `json:"branch_kept,omitempty"`
}

// pruneVerdict decides one worktree: prune only a stopped or exited
// session's clean, merged worktree.
func pruneVerdict(row *pruneRowJSON, in *worktree.Inspection) {
	if row.SessionState == "" {
		row.Reasons = append(row.Reasons, "no managed session (remove it with git rally worktree remove "+row.Name+")")
	} else if row.SessionState == "live" {
		row.Reasons = append(row.Reasons, "its session is live (git rally stop "+row.Session+" first)")
	}
	if row.Dirty {
		row.Reasons = append(row.Reasons, fmt.Sprintf("%d uncommitted or untracked path(s)", len(in.Dirty)))
	}
	if !row.Merged {
		what := "its branch is not merged into its base"
		if in.Unmerged > 0 {
			what = fmt.Sprintf("%s has %d commit(s) not merged into %s", row.Branch, in.Unmerged, in.Base)
		}
		row.Reasons = append(row.Reasons, what)
	}
	row.Action = "keep"
	if len(row.Reasons) == 0 {
		row.Action = "prune"
		row.Reasons = append(row.Reasons, fmt.Sprintf("session %s, clean, branch merged", row.SessionState))
	}
}

// pruneRows inspects every rally worktree (read-only).
func pruneRows(f *factory) ([]pruneRowJSON, error) {
	r, err := f.Repo()
	if err != nil {
		return nil, err
	}
	agents, err := r.Agents()
	if err != nil {
		return nil, err
	}
	infos, err := sessionsList(f)
	if err != nil {
		return nil, err
	}
	state := map[string]string{}
	base := map[string]string{}
	for _, in := range infos {
		state[in.Fact.Name] = in.State
		base[in.Fact.Name] = in.Fact.Base
	}
	rows := []pruneRowJSON{}
	for _, a := range agents {
		in, err := r.Inspect(a.Name, "", base[a.Name])
		if err != nil {
			return nil, err
		}
		row := pruneRowJSON{Name: a.Name, Path: in.Path, Branch: in.Branch, Session: a.Name, SessionState: state[a.Name],
			Dirty: len(in.Dirty) > 0, Merged: in.Merged, Unmerged: in.Unmerged, Reasons: []string{}}
		if row.Unmerged < 0 {
			row.Unmerged = 0
		}
		pruneVerdict(&row, in)
		rows = append(rows, row)
	}
	return rows, nil
}

func runWorktreePrune(f *factory, opts *worktreePruneOptions) error {
	rows, err := pruneRows(f)
	if err != nil {
		return err
	}
	out := struct {
		Applied   bool              `json:"applied"`
		Prunable  int               `json:"prunable"`
		Removed   int               `json:"removed"`
		Worktrees []pruneRowJSON    `json:"worktrees"`
		Facts     []json.RawMessage `json:"facts"`
	}{Applied: opts.apply, Worktrees: rows, Facts: []json.RawMessage{}}
	var o facts.Owner
	if opts.apply {
		if o, err = f.Identity(); err != nil {
			o = facts.Owner{}
		}
	}
	r, err := f.Repo()
	if err != nil {
		return err
	}
	for i := range rows {
		row := &rows[i]
		if row.Action != "prune" {
			continue
		}
		out.Prunable++
		if !opts.apply {
			continue
		}
		st, err := f.State()
		if err != nil {
			return err
		}
		start := ""
		who := o
		if s := st.Sessions[row.Name]; s != nil {
			start = s.Base
			if who.Tool == "" {
				who = facts.Owner{Tool: s.Tool}
			}
		}
		if who.Tool == "" {
			who = facts.Owner{Tool: facts.SystemTool}
		}
		rm, err := r.Remove(row.Name, false, "", start)
		if err != nil {
			return fmt.Errorf("pruning worktree %s: %w", row.Name, err)
		}
		written, _, err := recordRemoval(f, who, row.Name, rm)
		f.Forget()
		if err != nil {
			return fmt.Errorf("worktree %s is removed but recording it failed: %w", row.Name, err)
		}
		row.Removed, row.BranchKept = rm.RemovedWorktree, rm.KeptBranch
		out.Removed++
		out.Facts = append(out.Facts, cmdutil.RawFacts(written)...)
	}
	if opts.j.On() {
		return f.PrintJSON(&opts.j, out)
	}
	if len(rows) == 0 {
		fmt.Fprintln(f.Out, "no rally worktrees")
		return nil
	}
	for _, row := range rows {
		verb := "keep "
		switch {
		case row.Removed:
			verb = "pruned"
		case row.Action == "prune":
			verb = "prune"
		}
		fmt.Fprintf(f.Out, "%-6s %-20s %s: %s\n", verb, ident(row.Name), ident(row.Branch), strings.Join(row.Reasons, "; "))
	}
	if !opts.apply && out.Prunable > 0 {
		fmt.Fprintf(f.Err, "git-rally: hint: git rally worktree prune --apply   # removes the %d worktree(s) marked prune\n", out.Prunable)
	}
	return nil
}
