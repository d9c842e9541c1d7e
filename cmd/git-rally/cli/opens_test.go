package cli

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/git-rally/git-rally/refs"
	"github.com/git-rally/git-rally/worktree"
)

// A hot command opens the repository, its configuration and the ledger's
// object store once: counted, not timed.
func TestHotCommandsOpenOnce(t *testing.T) {
	sessionEnv(t)
	dir := chdirNewRepo(t)
	git := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	git("config", "rally.tool", "a:1")
	rally := func(stdin string, args ...string) int {
		var o, e bytes.Buffer
		return Run(args, strings.NewReader(stdin), &o, &e)
	}
	if c := rally("", "init"); c != 0 {
		t.Fatalf("init: exit %d", c)
	}
	rally("", "claim", "b.go", "--tool", "b:1")
	git("add", "-A") // nothing staged yet: stage a file
	if out, err := exec.Command("sh", "-c", "cd "+dir+" && echo x > a.go && git add a.go").CombinedOutput(); err != nil {
		t.Fatal(err, string(out))
	}
	payload := fmt.Sprintf(`{"session_id":"s1","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":%q}}`, dir, dir+"/b.go")
	// reads: the command reads the ledger (so it opens each exactly
	// once); the others open each at most once.
	for _, c := range []struct {
		stdin string
		args  []string
		reads bool
	}{
		{"", []string{"claim", "a.go"}, true},
		{"", []string{"check", "before-write", "a.go"}, true},
		{"", []string{"room"}, true},
		{"", []string{"room", "--json"}, true},
		{"", []string{"hook", "git", "pre-commit"}, true},
		{payload, []string{"hook", "claude", "pre-tool-use"}, true},
		{payload, []string{"hook", "claude", "session-start"}, true},
		{payload, []string{"hook", "claude", "user-prompt-submit"}, true},
		{payload, []string{"hook", "claude", "post-tool-use"}, false},
	} {
		refs.ResetOpens()
		worktree.Discovers.Store(0)
		code := rally(c.stdin, c.args...)
		n := []int64{worktree.Discovers.Load(), refs.Opens.Config.Load(), refs.Opens.ConfigFile.Load(), refs.Opens.Store.Load()}
		got := fmt.Sprintf("discover %d, config %d, config file %d, store %d", n[0], n[1], n[2], n[3])
		for _, k := range n {
			if k > 1 || c.reads && k != 1 {
				t.Errorf("git rally %s (exit %d): %s; want each once", strings.Join(c.args, " "), code, got)
				break
			}
		}
	}
}
