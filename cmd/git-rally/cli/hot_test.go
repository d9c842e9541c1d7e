package cli

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A hot command runs in a tree holding only itself (newTree); it must
// behave exactly as in the full tree: the same output, errors, hints and
// exit codes, the same facts written. Two identical repositories run the
// same session, one with each tree.
func TestHotCommandsBehaveAsInTheFullTree(t *testing.T) {
	sessionEnv(t)
	session := [][]string{
		{"init"},
		{"claim"}, {"claim", "--bogus", "x"}, {"claim", "a.go", "--lease", "nope", "--tool", "a:1"},
		{"enter", "--tool", "a:1"}, {"claim", "a.go", "--tool", "a:1", "--json"},
		{"claim", "a.go", "--tool", "b:1"}, {"claim", "a.go", "--tool", "b:1", "--json"},
		{"check"}, {"check", "befor-write", "a.go"}, {"check", "before-write", "a.go", "--tool", "b:1", "--json"},
		{"check", "before-write", "b.go", "--tool", "b:1"},
		{"hook"}, {"hook", "bogus"},
		{"note", "--tool", "a:1"}, {"note", "hello there", "--tool", "a:1"},
		{"room"}, {"room", "--json"}, {"room", "--query", "claims.#"}, {"room", "--query", "["},
		{"whoami"}, {"whoami", "--tool", "a:1", "--json"},
		{"inbox", "--tool", "b:1", "--json"}, {"next", "--tool", "a:1"},
		{"log", "--json", "-n", "2"}, {"log", "--kind", "nope"}, {"log", "-n", "x"},
		{"show", "nope"}, {"release", "--tool", "b:1"}, {"release", "a.go", "--tool", "a:1", "--json"},
		{"leave", "--tool", "a:1"}, {"leave", "--tool", "a:1"}, {"room", "--bogus"}, {"room", "extra", "args"},
		{"version"}, {"version", "--json"}, {"version", "x"},
	}
	run := func(full bool) []string {
		dir := chdirNewRepo(t)
		fullTree = full
		defer func() { fullTree = false }()
		var outs []string
		for _, args := range session {
			var o, e bytes.Buffer
			code := Run(args, strings.NewReader(""), &o, &e)
			s := fmt.Sprintf("$ git rally %s\nexit %d\n%s%s", strings.Join(args, " "), code, o.String(), e.String())
			outs = append(outs, strings.ReplaceAll(s, filepath.Base(dir), "<repo>"))
		}
		return outs
	}
	full, hot := run(true), run(false)
	codes := map[string]bool{}
	for i := range full {
		if full[i] != hot[i] {
			t.Errorf("full tree:\n%s\nhot tree:\n%s", full[i], hot[i])
		}
		codes[strings.SplitN(full[i], "\n", 3)[1]] = true
	}
	// The session must exercise success, usage errors and refusals.
	for _, c := range []string{"exit 0", "exit 2", "exit 3"} {
		if !codes[c] {
			t.Errorf("no command in the session ended with %s", c)
		}
	}
}

// sessionEnv is the environment of the parity tests: a fixed clock, no
// identity, no git configuration but the repository's, no background pack.
func sessionEnv(t *testing.T) {
	t.Setenv("RALLY_NOW", "2026-12-01T10:00:00Z")
	t.Setenv("RALLY_TOOL", "")
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("RALLY_AUTOPACK", "0")
}

// chdirNewRepo makes a git repository and changes into it for the test.
func chdirNewRepo(t *testing.T) string {
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	t.Chdir(dir)
	return dir
}
