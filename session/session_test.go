package session

import (
	"errors"
	"strings"
	"testing"

	"github.com/git-rally/git-rally/facts"
)

func TestIDsNumberPerRoomAndNeverReuse(t *testing.T) {
	st := facts.NewState()
	claude, _ := LookupHost("claude-code")
	for _, c := range []struct{ name, session, tool string }{
		{"", "claude-01", "claude_code:01"},
		{"rev", "claude-rev-01", "claude_code:rev-01"},
	} {
		s, tool, err := IDs(st, claude, c.name)
		if err != nil || s != c.session || tool != c.tool {
			t.Fatalf("IDs(%q) = %s %s %v, want %s %s", c.name, s, tool, err, c.session, c.tool)
		}
	}
	// A stopped claude-07 and another agent's ids still count as used.
	st.Sessions["claude-07"] = &facts.Fact{Name: "claude-07", Status: StatusStopped}
	st.Sessions["claude-rev-09"] = &facts.Fact{Name: "claude-rev-09"}
	st.Sessions["codex-12"] = &facts.Fact{Name: "codex-12"}
	if s, tool, _ := IDs(st, claude, ""); s != "claude-08" || tool != "claude_code:08" {
		t.Fatalf("after claude-07: %s %s", s, tool)
	}
	if _, _, err := IDs(st, claude, "Rev"); err == nil {
		t.Fatal("an upper-case --name was accepted")
	}
}

func TestAgentsAndCommands(t *testing.T) {
	for alias, want := range map[string]string{"claude": "claude", "claude_code": "claude", "claude-code": "claude",
		"codex": "codex", "gemini": "gemini", "opencode": "opencode", "oc": "opencode"} {
		h, err := Agent(alias, false)
		if err != nil || h.Agent != want {
			t.Errorf("Agent(%q) = %q, %v; want %q", alias, h.Agent, err, want)
		}
	}
	if _, err := Agent("aider", false); err == nil {
		t.Error("an unknown agent without --command-json was accepted")
	}
	if h, err := Agent("aider", true); err != nil || h.Family != "aider" {
		t.Errorf("Agent(aider, custom) = %+v, %v", h, err)
	}
	codex, _ := LookupHost("codex")
	// Codex runs in its own process (no shared daemon); host args go
	// before the first prompt.
	if got := strings.Join(codex.Command("-rf the parser"), "|"); got != "codex|--no-daemon|--|-rf the parser" {
		t.Errorf("codex task argv = %q", got)
	}
	if got := strings.Join(codex.Command("go", "-m", "gpt-5.5"), "|"); got != "codex|--no-daemon|-m|gpt-5.5|--|go" {
		t.Errorf("codex argv with host args = %q", got)
	}
	claude, _ := LookupHost("claude")
	if got := strings.Join(claude.Command("", "--model", "opus"), "|"); got != "claude|--model|opus" {
		t.Errorf("claude argv with host args, no task = %q", got)
	}
	gem, _ := LookupHost("gemini")
	if got := strings.Join(gem.Command("x y"), "|"); got != "gemini|--prompt-interactive=x y" {
		t.Errorf("gemini task argv = %q", got)
	}
	for _, bad := range [][]string{{}, {""}, {"sh", ""}, {"a\x00b"}} {
		if CheckCommand(bad) == nil {
			t.Errorf("CheckCommand(%q) accepted", bad)
		}
	}
}

func TestMessageIsSanitizedAndEndsWithTheAck(t *testing.T) {
	h := &facts.Fact{ID: "f_0123456789abcdef", Kind: facts.KindHandoff, Tool: "codex:01", Target: "claude_code:01",
		Subject: "fix \x1b[31mred\x1b[0m <b>now</b>\u202e", Body: "line1\nline2\rrm -rf /\x07"}
	d := &Delivery{Session: &facts.Fact{Name: "claude-01", Tool: "claude_code:01", Target: "rally-claude-01"}, Handoff: h}
	m := d.Message()
	if !strings.HasPrefix(m, ": git rally handoff f_0123456789abcdef from codex:01 to claude_code:01\n") {
		t.Errorf("header: %q", m)
	}
	if !strings.HasSuffix(m, "git rally receipt f_0123456789abcdef") {
		t.Errorf("does not end with the ack: %q", m)
	}
	if strings.ContainsAny(m, "\x1b\x07\r<>\u202e") {
		t.Errorf("control, bidi or markup characters got through: %q", m)
	}
	if strings.Count(m, "\n") != 4 {
		t.Errorf("peer text may not add lines: %q", m)
	}
}

// A tmux server that is gone or exiting (its last session just ended)
// means no session is live, never an error (the CI flake of
// TestManagedClaudeSession: "server exited unexpectedly").
func TestNoServerMeansNothingLive(t *testing.T) {
	for _, msg := range []string{
		"tmux list-panes: no server running on /tmp/tmux-0/default",
		"tmux list-panes: server exited unexpectedly",
		"tmux list-panes: error connecting to /tmp/x (No such file or directory)",
		"tmux list-panes: lost server",
	} {
		if !noServer(errors.New(msg)) {
			t.Errorf("noServer(%q) = false", msg)
		}
	}
	if noServer(errors.New("tmux list-panes: unknown format")) {
		t.Error("an unrelated tmux error counted as no server")
	}
}

// An argument that ends in ";" reaches the program whole: tmux reads such
// a word on its command line as the end of a command.
func TestTmuxWordKeepsTrailingSemicolon(t *testing.T) {
	for in, want := range map[string]string{"fix it;": `fix it\;`, ";": `\;`, `a\;`: `a\\;`, "plain": "plain", "a;b": "a;b"} {
		if got := tmuxWord(in); got != want {
			t.Errorf("tmuxWord(%q) = %q, want %q", in, got, want)
		}
	}
}
