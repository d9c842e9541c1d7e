package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// serve records a conflict between agent branches it sees move, for
// commits made where rally's post-commit hook did not run; once; and not
// with --read-only.
func TestServeRecordsConflictsItSees(t *testing.T) {
	repo := filepath.Join(t.TempDir(), "r")
	os.MkdirAll(repo, 0o777)
	gitT(t, repo, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(repo, "api.ts"), []byte("one\ntwo\nthree\n"), 0o666)
	gitT(t, repo, "add", ".")
	gitT(t, repo, "commit", "-q", "-m", "base")
	t.Chdir(repo)
	t.Setenv("RALLY_AUTOPACK", "0")
	t.Setenv("RALLY_HOOKS", "off") // the commits below are made without rally's hook
	rallyT(t, "init")
	for _, a := range []string{"a", "b"} {
		rallyT(t, "worktree", "add", a, "--tool", "codex:"+a)
		wt := filepath.Join(repo, ".rally", "worktrees", a)
		os.WriteFile(filepath.Join(wt, "api.ts"), []byte("one\ntwo by "+a+"\nthree\n"), 0o666)
		gitT(t, wt, "commit", "-q", "-am", a)
	}
	if out := rallyT(t, "log", "--kind", "risk", "--json"); out != "[]\n" {
		t.Fatalf("risks before serve looked:\n%s", out)
	}
	f := newFactory(strings.NewReader(""), os.Stderr, os.Stderr)
	defer f.Close()
	l, err := f.Ledger()
	if err != nil {
		t.Fatal(err)
	}
	r, err := f.Repo()
	if err != nil {
		t.Fatal(err)
	}
	ro := &serveSource{ledger: l, repo: r, predict: false}
	ro.BranchesMoved()
	if out := rallyT(t, "log", "--kind", "risk", "--json"); out != "[]\n" {
		t.Fatalf("a read-only serve recorded a risk:\n%s", out)
	}
	src := &serveSource{ledger: l, repo: r, predict: true}
	src.BranchesMoved()
	src.BranchesMoved()
	out := rallyT(t, "log", "--kind", "risk", "--json")
	if n := strings.Count(out, `"kind": "risk"`); n != 1 || !strings.Contains(out, "overlap-detected: rally/a (codex:a) and rally/b (codex:b) conflict on api.ts") {
		t.Errorf("want one overlap risk, got:\n%s", out)
	}
}
