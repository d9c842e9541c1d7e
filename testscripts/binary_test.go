package testscripts

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// These tests need the real binary at a real path: man finds pages next
// to the binary (<bin>/../share/man), and the README's tour runs
// `git rally` as a reader would.

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// installedBinary builds git-rally and git-rally-server into <prefix>/bin
// once per test run.
func installedBinary(t *testing.T) (prefix string) {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "rally-prefix-")
		if buildErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", filepath.Join(buildDir, "bin")+string(filepath.Separator),
			"github.com/git-rally/git-rally/cmd/git-rally", "github.com/git-rally/git-rally/cmd/git-rally-server").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildDir
}

// userEnv is a clean environment with the binary's directory on PATH.
func userEnv(t *testing.T, prefix string) []string {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, ".gitconfig"),
		[]byte("[init]\n\tdefaultBranch = main\n[user]\n\tname = Test\n\temail = test@example.com\n"), 0o666)
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "RALLY_") || strings.HasPrefix(k, "GIT_") || k == "MANPATH" || k == "HOME" ||
			k == "PAGER" || k == "MANPAGER" || k == "PATH" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "RALLY_AUTOPACK=0", "MANPAGER=cat", "PAGER=cat",
		"MANWIDTH=80", "PATH="+filepath.Join(prefix, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// TestManInstall: after `git rally man --install`, `git rally --help`
// (git's `git help rally`, a man page lookup) shows git-rally(1).
func TestManInstall(t *testing.T) {
	if _, err := exec.LookPath("man"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("man is not installed; .ci/run installs man-db")
		}
		t.Skip("man is not installed")
	}
	prefix := installedBinary(t)
	env := userEnv(t, prefix)
	dir := t.TempDir()
	run := func(args ...string) (string, error) {
		c := exec.Command(args[0], args[1:]...)
		c.Dir, c.Env = dir, env
		out, err := c.CombinedOutput()
		return string(out), err
	}
	if out, err := run("git", "rally", "man", "--install"); err != nil {
		t.Fatalf("man --install: %v\n%s", err, out)
	}
	page := filepath.Join(prefix, "share", "man", "man1", "git-rally.1")
	if _, err := os.Stat(page); err != nil {
		t.Fatalf("man --install did not write %s: %v", page, err)
	}
	out, err := run("git", "rally", "--help")
	if err != nil {
		t.Fatalf("git rally --help: %v\n%s", err, out)
	}
	if !strings.Contains(out, "GIT-RALLY(1)") || !strings.Contains(out, "coding agents") {
		t.Fatalf("git rally --help did not show the man page:\n%s", out)
	}
	if out, err := run("man", "git-rally-claim"); err != nil || !strings.Contains(out, "git rally claim src/api.ts") {
		t.Fatalf("man git-rally-claim: %v\n%s", err, out)
	}
}
