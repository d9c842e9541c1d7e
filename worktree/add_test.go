package worktree

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestAddRollsBackWhenRecordFails(t *testing.T) {
	r := testRepo(t)
	boom := errors.New("ledger unavailable")
	_, err := r.Add("api", "", func(a *Added) error {
		if _, err := os.Stat(filepath.Join(a.Path, ".git")); err != nil {
			t.Errorf("record ran before the worktree existed: %v", err)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Add = %v, want the record error", err)
	}
	if _, err := os.Stat(filepath.Join(r.WorkTree, ".rally")); !os.IsNotExist(err) {
		t.Errorf(".rally left behind: %v", err)
	}
	if h, _ := r.branchHead("rally/api"); h != "" {
		t.Errorf("branch rally/api left behind at %s", h)
	}
	wts, err := r.Worktrees()
	if err != nil {
		t.Fatal(err)
	}
	if len(wts) != 1 {
		t.Errorf("worktrees left registered: %+v", wts)
	}
	// and the name is free again
	a, err := r.Add("api", "", nil)
	if err != nil {
		t.Fatalf("second Add: %v", err)
	}
	if a.Branch != "rally/api" || a.BaseRev != "main" || a.BaseCommit != mustGit(t, r.WorkTree, "rev-parse", "main") {
		t.Errorf("Add = %+v", a)
	}
}

func TestAddKeepsWhatWasThere(t *testing.T) {
	r := testRepo(t)
	keep := filepath.Join(r.WorkTree, ".rally", "keep.txt")
	writeFile(t, keep, "mine\n")
	_, err := r.Add("api", "", func(*Added) error { return errors.New("no") })
	if err == nil {
		t.Fatal("Add succeeded")
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("rollback removed a file it did not make: %v", err)
	}
	if _, err := os.Stat(filepath.Join(r.WorkTree, ".rally", "worktrees")); !os.IsNotExist(err) {
		t.Errorf(".rally/worktrees left behind: %v", err)
	}
}
