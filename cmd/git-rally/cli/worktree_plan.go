package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/plan"
	"github.com/git-rally/git-rally/worktree"
)

type worktreePlanOptions struct {
	base string
	j    jsonFlags
}

func newCmdWorktreePlan(f *factory) *cobra.Command {
	opts := &worktreePlanOptions{}
	c := &cobra.Command{
		Use:   "plan [--base <branch>] [--json]",
		Short: "Predict, read-only, how the agents' branches merge: conflicts, overlaps, an order",
		Long: `For every rally/* branch and linked worktree: ahead/behind the base, dirty
paths, files changed since the merge base, the session's claims and the changed
files they do not cover, the paths predicted to conflict with the base (git
merge-tree), and the next action. Overall: pairs of branches that change the
same files (overlaps) or are predicted to conflict (conflicts), and a
deterministic merge order, clean merges first.

Nothing in the repository changes: no ref, no index, no worktree, no object
(merge-tree writes into a throw-away object directory). The base is --base,
else the main checkout's branch, else main or master.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error { return runWorktreePlan(f, opts) },
	}
	c.Flags().StringVar(&opts.base, "base", "", "the branch work merges into (default: the main checkout's branch)")
	addJSONFlags(c, &opts.j)
	return c
}

type planClaimJSON struct {
	ID      string   `json:"id"`
	Tool    string   `json:"tool"`
	Session string   `json:"session,omitempty"`
	Scopes  []string `json:"scopes"`
	Access  string   `json:"access"`
}

type planRowJSON struct {
	Name              string          `json:"name"`
	Path              string          `json:"path"`
	Branch            string          `json:"branch"`
	Head              string          `json:"head"`
	Ahead             int             `json:"ahead"`
	Behind            int             `json:"behind"`
	Dirty             bool            `json:"dirty"`
	DirtyCount        int             `json:"dirty_count"`
	DirtyFiles        []string        `json:"dirty_files"`
	ChangedFiles      []string        `json:"changed_files"`
	Claims            []planClaimJSON `json:"claims"`
	UnclaimedChanges  []string        `json:"unclaimed_changes"`
	ConflictsWithBase []string        `json:"conflicts_with_base"`
	NextAction        string          `json:"next_action"`
	NextCommand       string          `json:"next_command"`
	Session           string          `json:"session"`
}

type planPairJSON struct {
	A     string   `json:"a"`
	B     string   `json:"b"`
	Files []string `json:"files"`
}

type planStepJSON struct {
	Branch           string   `json:"branch"`
	ConflictExpected bool     `json:"conflict_expected"`
	ConflictsWith    []string `json:"conflicts_with"`
	Files            []string `json:"files"`
}

type planJSON struct {
	Base           string         `json:"base"`
	BaseHead       string         `json:"base_head"`
	Branches       []planRowJSON  `json:"branches"`
	Overlaps       []planPairJSON `json:"overlaps"`
	Conflicts      []planPairJSON `json:"conflicts"`
	SuggestedOrder []string       `json:"suggested_order"`
	MergeSteps     []planStepJSON `json:"merge_steps"`
}

func runWorktreePlan(f *factory, opts *worktreePlanOptions) error {
	r, err := f.Repo()
	if err != nil {
		return err
	}
	// Read-only (SPEC §9): a fetched ledger is not merged here, so no ref
	// or object changes; the next command that reads or appends merges it.
	l, err := f.Ledger()
	if err != nil {
		return err
	}
	l.NoTracking = true
	st, err := f.State()
	if err != nil {
		return err
	}
	p, err := r.Plan(worktree.PlanOptions{Base: opts.base, State: st, After: plan.MergeAfter(st), Live: liveSessions(st)})
	if err != nil {
		return err
	}
	out := toPlanJSON(p)
	if opts.j.On() {
		return f.PrintJSON(&opts.j, out)
	}
	printPlan(f.Out, out)
	return nil
}

func toPlanJSON(p *worktree.Plan) planJSON {
	out := planJSON{Base: p.Base, BaseHead: p.BaseHead, Branches: []planRowJSON{}, Overlaps: pairsJSON(p.Overlaps),
		Conflicts: pairsJSON(p.Conflicts), SuggestedOrder: nonNil(p.Order), MergeSteps: []planStepJSON{}}
	for _, r := range p.Rows {
		row := planRowJSON{Name: r.Name, Path: r.Path, Branch: r.Branch, Head: r.Head, Ahead: r.Ahead, Behind: r.Behind,
			Dirty: len(r.Dirty) > 0, DirtyCount: len(r.Dirty), DirtyFiles: nonNil(worktree.StatusPaths(r.Dirty)), ChangedFiles: nonNil(r.Changed), Claims: []planClaimJSON{},
			UnclaimedChanges: nonNil(r.Unclaimed), ConflictsWithBase: nonNil(r.BaseConflicts),
			NextAction: r.Next, NextCommand: r.NextCommand, Session: r.Session}
		for _, c := range r.Claims {
			row.Claims = append(row.Claims, planClaimJSON{ID: c.ID, Tool: c.Tool, Session: c.Session, Scopes: c.Scopes,
				Access: orDefault(c.Access, facts.Exclusive)})
		}
		out.Branches = append(out.Branches, row)
	}
	for _, s := range p.Steps {
		out.MergeSteps = append(out.MergeSteps, planStepJSON{Branch: s.Branch, ConflictExpected: s.Conflict,
			ConflictsWith: nonNil(s.With), Files: nonNil(s.Files)})
	}
	return out
}

func pairsJSON(ps []worktree.Pair) []planPairJSON {
	out := []planPairJSON{}
	for _, p := range ps {
		out = append(out, planPairJSON{A: p.A, B: p.B, Files: nonNil(p.Files)})
	}
	return out
}

// printPlan writes the plan for people: a table of branches, then the
// pairs and the order.
func printPlan(w io.Writer, p planJSON) {
	fmt.Fprintf(w, "base %s (%s)\n", p.Base, shortID(p.BaseHead))
	if len(p.Branches) == 0 {
		fmt.Fprintln(w, "\nno rally/* branches or linked worktrees; create one with: git rally worktree add <name>")
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BRANCH\tAHEAD\tBEHIND\tDIRTY\tCHANGED\tCLAIMS\tUNCLAIMED\tBASE CONFLICTS\tNEXT")
	for _, b := range p.Branches {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\n", orDefault(b.Branch, b.Name+" (detached)"), b.Ahead, b.Behind,
			b.DirtyCount, len(b.ChangedFiles), len(b.Claims), len(b.UnclaimedChanges), listOrDash(b.ConflictsWithBase, 3), b.NextAction)
	}
	tw.Flush()
	printPairs(w, "overlaps (same files changed)", p.Overlaps)
	printPairs(w, "conflicts (predicted by merge-tree)", p.Conflicts)
	if len(p.MergeSteps) > 0 {
		fmt.Fprintln(w, "\nsuggested order")
		for i, s := range p.MergeSteps {
			note := ""
			if s.ConflictExpected {
				note = fmt.Sprintf("  conflict expected with %s: %s", strings.Join(s.ConflictsWith, ", "), listOrDash(s.Files, 5))
			}
			fmt.Fprintf(w, "  %d. %s%s\n", i+1, s.Branch, note)
		}
	}
	first := true
	for _, b := range p.Branches {
		if b.NextCommand == "" {
			continue
		}
		if first {
			fmt.Fprintln(w, "\nnext")
			first = false
		}
		fmt.Fprintf(w, "  %s: %s\n", orDefault(b.Branch, b.Name), b.NextCommand)
	}
}

func printPairs(w io.Writer, title string, ps []planPairJSON) {
	if len(ps) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s\n", title)
	for _, p := range ps {
		fmt.Fprintf(w, "  %s <> %s: %s\n", p.A, p.B, listOrDash(p.Files, 5))
	}
}

func listOrDash(xs []string, max int) string {
	if len(xs) == 0 {
		return "-"
	}
	if len(xs) > max {
		return strings.Join(xs[:max], ", ") + fmt.Sprintf(" (+%d)", len(xs)-max)
	}
	return strings.Join(xs, ", ")
}
