package worktree

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/git-rally/git-rally/facts"
)

// Next actions of a plan row.
const (
	ActionPrune      = "prune"            // the worktree's directory is gone
	ActionCommit     = "commit"           // uncommitted or untracked work
	ActionUpdate     = "update_from_base" // merging into the base would conflict
	ActionCoordinate = "coordinate"       // it changes files another session holds
	ActionClaim      = "claim"            // changed files no claim of the session covers
	ActionBranch     = "branch"           // commits on a detached HEAD: put a branch on them
	ActionMerge      = "merge"            // ready to merge into the base
	ActionRemove     = "remove"           // nothing left to merge
	ActionRunning    = "running"          // nothing to merge yet, and its session's agent runs: never remove it
	ActionNone       = "none"
	maxClaimsCommand = 20
)

// Row is one branch or linked worktree in the plan.
type Row struct {
	Name, Path, Branch, Head string
	Session                  string // the rally session bound to it
	Ahead, Behind            int
	Dirty                    []string // `git status --porcelain` entries
	Changed                  []string // files changed since the merge base
	Claims                   []*facts.Fact
	Unclaimed                []string
	BaseConflicts            []string
	Missing                  bool // registered, but the directory is gone
	Next, NextCommand        string
}

// Pair is two branches that change the same files or are predicted to
// conflict.
type Pair struct {
	A, B  string
	Files []string
}

// Step is one place in the suggested merge order.
type Step struct {
	Branch   string
	Conflict bool     // a conflict is expected when merging it here
	With     []string // the base and/or the branches merged before it that it conflicts with
	Files    []string
}

// Plan is the read-only merge plan.
type Plan struct {
	Base, BaseHead string
	Rows           []*Row
	Overlaps       []Pair
	Conflicts      []Pair
	Order          []string
	Steps          []Step
	after          map[string][]string
	live           map[string]bool
}

// PlanOptions tunes Plan.
type PlanOptions struct {
	Base  string       // "" = DefaultBase
	State *facts.State // the room, for the sessions' claims; nil: none
	// After maps a session to the sessions whose branches merge before
	// its own (the tasks a plan task depends on); see order.
	After map[string][]string
	// Live holds the sessions whose agent runs now: their worktrees are
	// never suggested for removal.
	Live map[string]bool
}

// Plan reports every rally/* branch and every linked worktree against the
// base: what each changes, what its session claims, what would conflict
// with the base and between branches, and an order to merge them. It
// changes nothing in the repository: git status runs without optional
// locks and merge-tree writes into a throw-away object directory. The
// number of git processes is linear in the branches: three per branch and
// one merge-tree for all pairs.
func (r *Repo) Plan(opts PlanOptions) (*Plan, error) {
	p := &Plan{Base: opts.Base, after: opts.After, live: opts.Live}
	var err error
	if p.Base == "" {
		if p.Base, err = r.DefaultBase(); err != nil {
			return nil, err
		}
	}
	if p.BaseHead, err = r.Commit(p.Base); err != nil {
		return nil, err
	}
	if p.Rows, err = r.planRows(p.Base); err != nil {
		return nil, err
	}
	st := opts.State
	if st == nil {
		st = facts.NewState()
	}
	for _, row := range p.Rows {
		if err := r.fillRow(p, row, st); err != nil {
			return nil, err
		}
	}
	if err := r.predict(p); err != nil {
		return nil, err
	}
	for _, row := range p.Rows {
		row.Next, row.NextCommand = nextAction(p, row, st)
	}
	p.order()
	return p, nil
}

// planRows collects the linked worktrees (not the main one) and the
// rally/* branches, one row per branch, sorted.
func (r *Repo) planRows(base string) ([]*Row, error) {
	wts, err := r.Worktrees()
	if err != nil {
		return nil, err
	}
	byBranch := map[string]*Row{}
	var rows []*Row
	for i, w := range wts {
		if i == 0 || w.Bare { // the main worktree, or the bare repository
			continue
		}
		if w.Branch != "" && w.Branch == base {
			continue
		}
		row := &Row{Path: w.Path, Branch: w.Branch, Head: w.Head, Missing: w.Prunable}
		if w.Branch != "" {
			byBranch[w.Branch] = row
		}
		rows = append(rows, row)
	}
	out, err := r.git("for-each-ref", "--format=%(refname)%00%(objectname)", "refs/heads/"+BranchPrefix)
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(out, "\n") {
		ref, head, ok := strings.Cut(line, "\x00")
		if !ok {
			continue
		}
		b := strings.TrimPrefix(ref, "refs/heads/")
		if b == base {
			continue
		}
		if row := byBranch[b]; row != nil {
			row.Head = head
			continue
		}
		rows = append(rows, &Row{Branch: b, Head: head})
	}
	for _, row := range rows {
		row.Name, row.Session = r.rowName(row)
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Branch != rows[j].Branch {
			return rows[i].Branch < rows[j].Branch
		}
		return rows[i].Path < rows[j].Path
	})
	return rows, nil
}

// rowName names a row and finds its session: a rally worktree or branch
// is <name>; another worktree is named by its branch, else its directory.
func (r *Repo) rowName(row *Row) (name, session string) {
	if row.Path != "" {
		if n := r.nameOf(row.Path); n != "" {
			return n, n
		}
	}
	if n, ok := strings.CutPrefix(row.Branch, BranchPrefix); ok && row.Path == "" {
		return n, n
	}
	if row.Branch != "" {
		return row.Branch, ""
	}
	return filepath.Base(row.Path), ""
}

// fillRow adds what git and the room know about one row.
func (r *Repo) fillRow(p *Plan, row *Row, st *facts.State) error {
	var err error
	if row.Path != "" && !row.Missing {
		if row.Dirty, err = Dirty(row.Path); err != nil {
			return fmt.Errorf("status of %s: %w", row.Path, err)
		}
	}
	if row.Head == "" {
		return nil
	}
	if row.Ahead, row.Behind, err = r.aheadBehind(p.BaseHead, row.Head); err != nil {
		return err
	}
	if row.Ahead > 0 {
		if row.Changed, err = r.changedFiles(p.BaseHead, row.Head); err != nil {
			return err
		}
	}
	if row.Session != "" {
		for _, c := range st.SortedClaims() {
			if c.Session == row.Session {
				row.Claims = append(row.Claims, c)
			}
		}
	}
	done := reported(st, row.Session)
	for _, f := range row.Changed {
		if !covered(row.Claims, f) && !covered(done, f) {
			row.Unclaimed = append(row.Unclaimed, f)
		}
	}
	return nil
}

// covered reports whether a claim covers any of the paths.
func covered(claims []*facts.Fact, paths ...string) bool {
	for _, c := range claims {
		for _, s := range c.Scopes {
			sc := facts.ParseCanonical(s)
			for _, p := range paths {
				if facts.Covers(sc, p) {
					return true
				}
			}
		}
	}
	return false
}

// mergeable is a row with commits to merge.
func (row *Row) mergeable() bool { return row.Head != "" && row.Ahead > 0 }

// key names a row in pairs: its branch, else (detached) its name.
func (row *Row) key() string {
	if row.Branch != "" {
		return row.Branch
	}
	return row.Name
}

// predict fills the base conflicts of every row, and the overlaps and
// predicted conflicts of every pair of mergeable rows, with one merge-tree
// process.
func (r *Repo) predict(p *Plan) error {
	var rows []*Row
	for _, row := range p.Rows {
		if row.mergeable() {
			rows = append(rows, row)
		}
	}
	var ms []merge
	type pairIdx struct{ i, j int }
	var pairs []pairIdx
	for _, row := range rows {
		ms = append(ms, merge{p.BaseHead, row.Head})
	}
	for i := range rows {
		for j := i + 1; j < len(rows); j++ {
			if files := intersect(rows[i].Changed, rows[j].Changed); len(files) > 0 {
				p.Overlaps = append(p.Overlaps, Pair{rows[i].key(), rows[j].key(), files})
			}
			if rows[i].Head != rows[j].Head {
				ms = append(ms, merge{rows[i].Head, rows[j].Head})
				pairs = append(pairs, pairIdx{i, j})
			}
		}
	}
	res, err := r.predictMerges(ms)
	if err != nil {
		return err
	}
	for k, row := range rows {
		row.BaseConflicts = sortedSet(res[k].Conflicts)
	}
	for k, pr := range pairs {
		if m := res[len(rows)+k]; !m.Clean {
			files := sortedSet(m.Conflicts)
			p.Conflicts = append(p.Conflicts, Pair{rows[pr.i].key(), rows[pr.j].key(), files})
		}
	}
	return nil
}

func intersect(a, b []string) []string {
	in := make(map[string]bool, len(a))
	for _, x := range a {
		in[x] = true
	}
	var out []string
	for _, y := range b {
		if in[y] {
			out = append(out, y)
			in[y] = false
		}
	}
	sort.Strings(out)
	return out
}

func sortedSet(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}

// nextAction is the one thing to do next about a row, and the command.
func nextAction(p *Plan, row *Row, st *facts.State) (string, string) {
	in := func(cmd string) string {
		if row.Path == "" {
			return cmd
		}
		return "git -C " + shellQuote(row.Path) + " " + strings.TrimPrefix(cmd, "git ")
	}
	switch {
	case row.Missing:
		return ActionPrune, "git worktree prune"
	case len(row.Dirty) > 0:
		return ActionCommit, in("git status")
	case row.Branch == "" && row.mergeable():
		return ActionBranch, in("git switch -c " + SanitizeName(row.Name))
	case !row.mergeable():
		if row.Session != "" && p.live[row.Session] {
			return ActionRunning, "git rally capture " + row.Session
		}
		if row.Session != "" {
			return ActionRemove, "git rally worktree remove " + row.Name
		}
		return ActionNone, ""
	case len(row.BaseConflicts) > 0:
		if row.Path == "" {
			return ActionUpdate, fmt.Sprintf("git switch %s && git merge %s", row.Branch, p.Base)
		}
		return ActionUpdate, in("git merge " + p.Base)
	case heldByOthers(st, row) != nil:
		c := heldByOthers(st, row)
		if c.Tool == sessionTool(st, row.Session) {
			// One agent under two identities: never a handoff to itself.
			where := "the main checkout"
			if c.Session != "" {
				where = "session " + c.Session
			}
			return ActionCoordinate, fmt.Sprintf("git rally release %s --tool %s   (in %s: your own tool's claim on %s)",
				c.ID, shellQuote(c.Tool), where, strings.Join(c.Scopes, " "))
		}
		return ActionCoordinate, fmt.Sprintf("git rally handoff --target %s --subject %s", shellQuote(c.Tool),
			shellQuote(fmt.Sprintf("%s changes files under your claim %s (%s)", row.Branch, c.ID, strings.Join(c.Scopes, " "))))
	case len(row.Unclaimed) > 0 && sessionPresent(st, row.Session):
		files := row.Unclaimed
		if len(files) > maxClaimsCommand {
			files = files[:maxClaimsCommand]
		}
		q := make([]string, len(files))
		for i, f := range files {
			q[i] = shellQuote(f)
		}
		return ActionClaim, in("git rally claim " + strings.Join(q, " "))
	}
	return ActionMerge, "git merge " + row.Branch
}

// heldByOthers returns the oldest claim of another session that covers one
// of the row's unclaimed changes: work that collides with someone's claim.
func heldByOthers(st *facts.State, row *Row) *facts.Fact {
	for _, c := range st.SortedClaims() {
		if row.Session != "" && c.Session == row.Session {
			continue
		}
		if facts.AccessConflict(c.Access, facts.Exclusive) && covered([]*facts.Fact{c}, row.Unclaimed...) {
			return c
		}
	}
	return nil
}

// sessionTool is the tool bound to a session, "" for none.
func sessionTool(st *facts.State, session string) string {
	if session == "" {
		return ""
	}
	for _, p := range st.Peers {
		if p.Session == session {
			return p.Tool
		}
	}
	return ""
}

// sessionPresent reports whether an owner of the session is still in the
// room: claiming only makes sense for a session that has not left.
func sessionPresent(st *facts.State, session string) bool {
	if session == "" {
		return false
	}
	for _, p := range st.Peers {
		if p.Session == session && !p.Left {
			return true
		}
	}
	return false
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(nameChar(r) || r == '/' || r == ':' || r == '@' || r == '+' || r == '=' || r == ',')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
