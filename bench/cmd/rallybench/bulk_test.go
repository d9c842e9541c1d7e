package main

import (
	"bufio"
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/ledger"
	"github.com/git-rally/git-rally/refs"
)

// TestCommitsAsAppended holds bulk -commits to rally's appends: the same
// facts appended one by one through ledger.Append, each at its fact's
// time, make the same commits (ids, so trees, messages and times, at
// every fact) as the fast-import stream. 520 facts three minutes apart
// fill a day's first segment (its segment blob), start its second and
// cross the month's end.
func TestCommitsAsAppended(t *testing.T) {
	const n = 520
	gap := 3 * time.Minute
	end := time.Date(2026, 3, 1, 2, 0, 0, 0, time.UTC)

	gen := t.TempDir()
	git(t, gen, nil, "init", "-q", ".")
	var stream bytes.Buffer
	w := bufio.NewWriter(&stream)
	if err := writeCommits(w, n, end, gap); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	git(t, gen, stream.Bytes(), "fast-import", "--quiet")

	app := t.TempDir()
	git(t, app, nil, "init", "-q", ".")
	l, err := ledger.Open(filepath.Join(app, ".git"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	start := end.Add(-time.Duration(n) * gap)
	now := start.Add(-gap)
	l.Now = func() time.Time { return now }
	if _, err := l.Init(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		f := bulkFields(i, start, gap)
		now = f.Time()
		if _, err := l.Append(func(*facts.State, time.Time) ([]*facts.Fact, error) {
			return []*facts.Fact{f}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}

	a := strings.Fields(git(t, gen, nil, "rev-list", "--reverse", ledger.LedgerRef))
	b := strings.Fields(git(t, app, nil, "rev-list", "--reverse", ledger.LedgerRef))
	if len(a) != n+1 || len(b) != n+1 {
		t.Fatalf("%d generated commits, %d appended; want %d", len(a), len(b), n+1)
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("commit %d: generated %s, appended %s\n%s\n---\n%s", i, a[i], b[i],
				git(t, gen, nil, "ls-tree", "-r", a[i]), git(t, app, nil, "ls-tree", "-r", b[i]))
		}
	}
	segs := git(t, gen, nil, "ls-tree", "-r", "--name-only", ledger.LedgerRef)
	if !strings.Contains(segs, "facts/2026-02/28/0000.jsonl") || !strings.Contains(segs, "facts/2026-02/28/0001/") {
		t.Errorf("no full segment with its segment blob and a second one:\n%s", segs)
	}
	if !strings.Contains(segs, "facts/2026-02/28/") || !strings.Contains(segs, "facts/2026-03/01/") {
		t.Errorf("the facts do not cross the month's end:\n%s", segs)
	}
}

func git(t *testing.T, dir string, stdin []byte, args ...string) string {
	t.Helper()
	out, err := refs.GitInput(dir, nil, stdin, args...)
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return out
}
