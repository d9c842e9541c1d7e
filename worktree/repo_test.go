package worktree

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// Discover keeps the config file it read while the file is unchanged; a
// git config in between makes Config say nothing, so the caller reads the
// new file.
func TestRepoConfigWhileUnchanged(t *testing.T) {
	r := testRepo(t)
	r2, err := Discover(r.WorkTree)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(r2.CommonDir, "config"))
	if err != nil {
		t.Fatal(err)
	}
	if got := r2.Config(); !bytes.Equal(got, want) {
		t.Fatalf("Config() = %q, want the file %q", got, want)
	}
	mustGit(t, r.WorkTree, "config", "rally.sign", "true")
	if got := r2.Config(); got != nil {
		t.Fatalf("Config() after git config = %q, want nil", got)
	}
}
