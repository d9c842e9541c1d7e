package worktree

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-rally/git-rally/refs"
)

// scaleRepo makes n agent worktrees with one commit each that changes
// files files. Neighbours share 5 files with different content, so every
// adjacent pair overlaps and is predicted to conflict.
func scaleRepo(tb testing.TB, n, files int) *Repo {
	r := testRepo(tb)
	step := files - 5
	for i := 0; i < n*step+5; i++ {
		writeFile(tb, filepath.Join(r.WorkTree, "src", fmt.Sprintf("f%04d.txt", i)), fmt.Sprintf("line %d\n", i))
	}
	mustGit(tb, r.WorkTree, "add", "-A")
	mustGit(tb, r.WorkTree, "commit", "-q", "-m", "files")
	for b := 0; b < n; b++ {
		a, err := r.Add(fmt.Sprintf("agent-%02d", b), "", nil)
		if err != nil {
			tb.Fatal(err)
		}
		for i := b * step; i < b*step+files; i++ {
			writeFile(tb, filepath.Join(a.Path, "src", fmt.Sprintf("f%04d.txt", i)), fmt.Sprintf("agent %d was here\n", b))
		}
		mustGit(tb, a.Path, "commit", "-q", "-am", a.Name)
	}
	return r
}

// TestPlanScale checks the plan over 10 branches of 50 changed files and
// prints how long it took and how many git processes it started. The
// count, not the time, is asserted: it must stay linear in the branches.
func TestPlanScale(t *testing.T) {
	const n, files = 10, 50
	r := scaleRepo(t, n, files)
	before := refs.GitCount
	start := time.Now()
	p, err := r.Plan(PlanOptions{})
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	procs := refs.GitCount - before
	t.Logf("worktree plan: %d branches x %d changed files: %v, %d git processes", n, files, elapsed.Round(time.Millisecond), procs)
	if max := 5 + 3*n; procs > max {
		t.Errorf("%d git processes for %d branches; want at most %d (5 + 3 per branch)", procs, n, max)
	}
	if len(p.Rows) != n {
		t.Fatalf("%d rows, want %d", len(p.Rows), n)
	}
	for _, row := range p.Rows {
		if len(row.Changed) != files || row.Ahead != 1 || len(row.BaseConflicts) != 0 {
			t.Errorf("%s: %d changed, ahead %d, base conflicts %v", row.Branch, len(row.Changed), row.Ahead, row.BaseConflicts)
		}
	}
	if len(p.Overlaps) != n-1 || len(p.Conflicts) != n-1 {
		t.Errorf("%d overlaps and %d conflicts, want %d each", len(p.Overlaps), len(p.Conflicts), n-1)
	}
	for _, c := range p.Conflicts {
		if len(c.Files) != 5 {
			t.Errorf("%s <> %s: %d conflicting files, want 5", c.A, c.B, len(c.Files))
		}
	}
	// A chain of conflicts: the two ends (one conflict each) first, then
	// every other branch cleanly; the rest are flagged.
	if len(p.Order) != n {
		t.Fatalf("order %v", p.Order)
	}
	clean := 0
	for _, s := range p.Steps {
		if !s.Conflict {
			clean++
		}
	}
	if clean != n/2 {
		t.Errorf("%d clean steps in %v, want %d", clean, p.Order, n/2)
	}
	if got := strings.Join(p.Order[:2], " "); got != "rally/agent-00 rally/agent-09" {
		t.Errorf("order starts %q", got)
	}
}

// BenchmarkPlan measures the plan over 10 branches of 50 changed files;
// it reports the git processes per plan next to the time:
//
//	go test ./worktree -run '^$' -bench Plan -benchtime 10x
func BenchmarkPlan(b *testing.B) {
	r := scaleRepo(b, 10, 50)
	before := refs.GitCount
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := r.Plan(PlanOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(refs.GitCount-before)/float64(b.N), "git-procs/op")
}
