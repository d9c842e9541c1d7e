package worktree

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-rally/git-rally/refs"
)

// testRepo makes a repository with one commit on main in a private HOME.
func testRepo(tb testing.TB) *Repo {
	tb.Helper()
	home := tb.TempDir()
	tb.Setenv("HOME", home)
	tb.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, k := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES"} {
		tb.Setenv(k, "")
		os.Unsetenv(k)
	}
	os.WriteFile(filepath.Join(home, ".gitconfig"),
		[]byte("[user]\n\tname = Test\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n"), 0o666)
	dir := filepath.Join(tb.TempDir(), "repo")
	mustGit(tb, "", "init", "-q", dir)
	os.WriteFile(filepath.Join(dir, "README"), []byte("base\n"), 0o666)
	mustGit(tb, dir, "add", ".")
	mustGit(tb, dir, "commit", "-q", "-m", "base")
	r, err := Discover(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

func mustGit(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	if dir == "" {
		dir = "."
	}
	out, err := refs.Git(dir, nil, args...)
	if err != nil {
		tb.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(out)
}

func writeFile(tb testing.TB, path, content string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o666); err != nil {
		tb.Fatal(err)
	}
}
