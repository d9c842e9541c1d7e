package testscripts

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/git-rally/git-rally/hooks"
)

// Codex hands its MCP servers no session id; the server finds the agent
// through the note its hooks left under the host process (here, this
// test). The installed lines reach rally through a shell, and in older
// versions through git as well: both forms find the same host.
func TestHostProcessIdentityThroughInstalledLines(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("host processes are read from /proc")
	}
	for _, form := range []struct {
		name string
		hook string   // the installed command line, as a shell runs it
		mcp  []string // the registered server, as the host starts it
	}{
		{"direct", "git-rally hook codex session-start", []string{"git-rally", "mcp"}},
		{"through git", "git rally hook codex session-start", []string{"git", "rally", "mcp"}},
	} {
		t.Run(form.name, func(t *testing.T) {
			dir := newRepo(t)
			const sid = "019a2b3c-0000-7000-8000-00000000abcd"
			hook := exec.Command("sh", "-c", form.hook)
			hook.Dir, hook.Env = dir, mcpEnv()
			hook.Stdin = strings.NewReader(`{"session_id":"` + sid + `","cwd":"` + dir + `","hook_event_name":"SessionStart","source":"startup"}`)
			if out, err := hook.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", form.hook, err, out)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, form.mcp[0], form.mcp[1:]...)
			cmd.Dir, cmd.Env = dir, mcpEnv()
			client := mcp.NewClient(&mcp.Implementation{Name: "rally-test-host", Version: "1"}, nil)
			s, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
			if err != nil {
				t.Fatalf("connecting to %s: %v", strings.Join(form.mcp, " "), err)
			}
			defer s.Close()
			want := "codex:" + hooks.SessionTag(hooks.Codex, sid)
			if got := callTool(t, s, "rally_claim", map[string]any{"scopes": []string{"b.go"}}).ok(t, "claim").firstFact(t)["tool"]; got != want {
				t.Errorf("claim through %s after %q: tool %v, want %s", strings.Join(form.mcp, " "), form.hook, got, want)
			}
		})
	}
}
