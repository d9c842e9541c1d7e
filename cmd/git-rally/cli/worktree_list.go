package cli

import (
	"fmt"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/facts"
)

func newCmdWorktreeList(f *factory) *cobra.Command {
	var j jsonFlags
	c := &cobra.Command{
		Use:   "list",
		Short: "The rally worktrees: branch, head, dirty count, session and how alive its owner is",
		Long: `List the rally worktrees (.rally/worktrees/<name>) with their branch, head,
number of dirty paths, session, the tool bound at add, and the owner's state
(active, idle, stale or left). status is active (recorded by worktree add),
unrecorded (made by plain git), missing (recorded but gone from disk) or
prunable (registered, directory gone).`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error { return runWorktreeList(f, &j) },
	}
	addJSONFlags(c, &j)
	return c
}

type worktreeListJSON struct {
	Name       string `json:"name"`
	Path       string `json:"path"`
	Branch     string `json:"branch"`
	Head       string `json:"head"`
	Dirty      bool   `json:"dirty"`
	DirtyCount int    `json:"dirty_count"`
	Session    string `json:"session"`
	Tool       string `json:"tool"`
	OwnerState string `json:"owner_state"`
	Status     string `json:"status"`
	Base       string `json:"base"`
}

func runWorktreeList(f *factory, j *jsonFlags) error {
	r, err := f.Repo()
	if err != nil {
		return err
	}
	now, err := f.Now()
	if err != nil {
		return err
	}
	// As read-only as worktree plan: a fetched ledger is not merged here.
	if l, err := f.Ledger(); err == nil {
		l.NoTracking = true
	}
	st, err := f.State()
	if err != nil {
		return err
	}
	agents, err := r.Agents()
	if err != nil {
		return err
	}
	rows := []worktreeListJSON{}
	seen := map[string]bool{}
	for _, a := range agents {
		seen[a.Name] = true
		row := worktreeListJSON{Name: a.Name, Path: a.Path, Branch: a.Branch, Head: a.Head, Dirty: len(a.Dirty) > 0, DirtyCount: len(a.Dirty),
			Session: a.Name, Status: "unrecorded"}
		if s := st.Sessions[a.Name]; s != nil && s.Status != "removed" {
			row.Tool, row.Base, row.Status = s.Tool, s.Base, orDefault(s.Status, "active")
		}
		if a.Prunable {
			row.Status = "prunable"
		}
		row.OwnerState = sessionState(st, a.Name, now)
		rows = append(rows, row)
	}
	for name, s := range st.Sessions {
		if seen[name] || s.Status == "removed" {
			continue
		}
		rows = append(rows, worktreeListJSON{Name: name, Path: s.Path, Branch: s.Branch, Session: name, Tool: s.Tool,
			Base: s.Base, Status: "missing", OwnerState: sessionState(st, name, now)})
	}
	sort.Slice(rows, func(i, k int) bool { return rows[i].Name < rows[k].Name })
	if j.On() {
		return f.PrintJSON(j, map[string]any{"worktrees": rows})
	}
	if len(rows) == 0 {
		fmt.Fprintln(f.Out, "no rally worktrees; create one with: git rally worktree add <name>")
		return nil
	}
	tw := tabwriter.NewWriter(f.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tBRANCH\tHEAD\tDIRTY\tOWNER\tSTATE\tSTATUS\tPATH")
	for _, w := range rows {
		owner := orDefault(w.Tool, "-")
		if w.Tool != "" {
			owner += "@" + w.Session
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", w.Name, orDefault(w.Branch, "(detached)"), orDefault(shortID(w.Head), "-"),
			w.DirtyCount, owner, orDefault(w.OwnerState, "-"), w.Status, w.Path)
	}
	return tw.Flush()
}

// sessionState is the liveness of the most alive owner of a session, ""
// when none has written.
func sessionState(st *facts.State, session string, now time.Time) string {
	rank := map[string]int{facts.Active: 4, facts.Idle: 3, facts.Stale: 2, facts.Left: 1}
	best := ""
	for _, p := range st.Peers {
		if p.Session != session {
			continue
		}
		s := st.OwnerState(facts.Owner{Tool: p.Tool, Session: p.Session}, now)
		if rank[s] > rank[best] {
			best = s
		}
	}
	return best
}
