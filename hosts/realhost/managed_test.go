package realhost

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A real Claude Code session launched by `git rally run` (SPEC §13): its
// own worktree, a private tmux server, RALLY_TOOL=claude_code:01 and the
// hooks installed in the worktree, so its edit is claimed for the session
// from the first write. The session runs `claude -p` through
// --command-json: the interactive first prompt (--task) needs a person
// for Claude Code's first-run dialogs.
func TestManagedClaudeSession(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("tmux is not installed")
		}
		t.Skip("tmux is not installed")
	}
	r := newRepo(t, "claude")
	tmuxDir := t.TempDir()
	bin := filepath.Join(hostsDir, "@anthropic-ai", "claude-code-linux-x64", "claude")
	wt := filepath.Join(r.dir, ".rally", "worktrees", "claude-01")
	argv, _ := json.Marshal([]string{bin, "-p", script(
		step{Tool: "Write", Input: map[string]any{"file_path": filepath.Join(wt, "src", "managed.go"), "content": "package src // managed\n"}},
	), "--output-format", "json", "--dangerously-skip-permissions"})
	env := r.env("TMUX_TMPDIR="+tmuxDir, "TMUX=",
		"ANTHROPIC_BASE_URL="+r.srv.url, "ANTHROPIC_API_KEY=sk-ant-test-0000000000000000000000",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "IS_SANDBOX=1")
	t.Cleanup(func() {
		kill := exec.Command("tmux", "kill-server")
		kill.Env = env
		kill.Run() // this test's private server only
	})
	rallyEnv := func(args ...string) string {
		cmd := exec.Command(filepath.Join(binDir, "git-rally"), args...)
		cmd.Dir, cmd.Env = r.dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git rally %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	out := rallyEnv("run", "claude", "--command-json", string(argv), "--json")
	check(t, strings.Contains(out, `"tool": "claude_code:01"`) || strings.Contains(out, `"tool":"claude_code:01"`), "claude: run named the session's tool claude_code:01", out)
	// The pane ends when claude -p does; rally then shows the session exited.
	deadline := time.Now().Add(90 * time.Second)
	state := ""
	for time.Now().Before(deadline) {
		var s struct {
			Sessions []struct{ Session, State string } `json:"sessions"`
		}
		json.Unmarshal([]byte(rallyEnv("sessions", "--json")), &s)
		if len(s.Sessions) == 1 {
			state = s.Sessions[0].State
		}
		if state != "live" {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	check(t, state == "exited", "claude: the managed session ran and its terminal ended (state exited)", state)
	got, _ := r.read(filepath.Join(".rally", "worktrees", "claude-01", "src", "managed.go"))
	check(t, got == "package src // managed\n", "claude: the managed session wrote its file in its own worktree", got)
	check(t, hasScope(r.find("claim", "claude_code:01"), "file:src/managed.go"), "claude: its edit was claimed by claude_code:01, the session's tool, from the hooks in its worktree")
}
