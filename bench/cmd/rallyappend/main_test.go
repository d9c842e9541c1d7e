package main

import (
	"os"
	"os/exec"
	"testing"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/ledger"
)

// rallyappend appends the claim it is asked for to the ledger of the
// repository it runs in; a second claim of the same file by another tool
// is refused, as git rally claim's would be, and writes nothing.
func TestRunAppendsTheClaim(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	t.Chdir(dir)
	if err := run([]string{"src/a.go", "bench:cold"}); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"src/a.go", "bench:other"}); err == nil {
		t.Fatal("a second tool's claim of the same file was accepted")
	}
	if err := run([]string{"src/a.go"}); err == nil {
		t.Fatal("one argument accepted")
	}
	l, err := ledger.Open(".git", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	st, err := l.Read()
	if err != nil {
		t.Fatal(err)
	}
	got := st.OwnedClaims(facts.Owner{Tool: "bench:cold"})
	if len(got) != 1 || len(got[0].Scopes) != 1 || got[0].Scopes[0] != "file:src/a.go" {
		t.Fatalf("claims of bench:cold: %+v", got)
	}
	if n := len(st.SortedClaims()); n != 1 {
		t.Fatalf("%d open claims, want 1", n)
	}
	if _, err := os.Stat(".git/refs/rally/ledger"); err != nil {
		t.Fatal(err)
	}
}
