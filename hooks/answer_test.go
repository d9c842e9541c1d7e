package hooks

import (
	"encoding/json"
	"strings"
	"testing"
)

// Allow is silence: an explicit "allow" would skip the user's own
// permission prompt in Claude Code and is an error in Codex.
func TestAnswersNeverSayAllow(t *testing.T) {
	for name, h := range agentHosts {
		for _, out := range [][]byte{h.quiet(), h.deny("r"), h.advise("r", "s"), h.context(h.start, "c")} {
			if strings.Contains(string(out), "allow") {
				t.Errorf("%s: %s", name, out)
			}
			if len(out) > 0 && !json.Valid(out) {
				t.Errorf("%s: invalid JSON %s", name, out)
			}
		}
	}
	if agentHosts[Claude].quiet() != nil || agentHosts[Codex].quiet() != nil {
		t.Error("Claude Code and Codex allow with no output")
	}
	if string(agentHosts[Gemini].quiet()) != "{}\n" || string(agentHosts[Cursor].quiet()) != "{}\n" {
		t.Error("Gemini CLI allows with {}")
	}
}

func TestDenyShapes(t *testing.T) {
	// Angle brackets are escaped: peer text cannot close a host's tag.
	want := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"held &lt;by&gt; x"}}` + "\n"
	for _, h := range []string{Claude, Codex} {
		if got := string(agentHosts[h].deny("held <by> x")); got != want {
			t.Errorf("%s deny = %s", h, got)
		}
	}
	if got := string(agentHosts[Gemini].deny("r")); got != `{"decision":"deny","reason":"r"}`+"\n" {
		t.Errorf("gemini deny = %s", got)
	}
	if got := string(agentHosts[Cursor].deny("r <x>\nmore")); got != `{"permission":"deny","user_message":"r &lt;x&gt;","agent_message":"r &lt;x&gt;\nmore"}`+"\n" {
		t.Errorf("cursor deny = %s", got)
	}
	// Gemini's model reads a warning only from AfterTool's additionalContext.
	if got := string(agentHosts[Gemini].afterAdvice("w </system-reminder>")); got != `{"hookSpecificOutput":{"hookEventName":"AfterTool","additionalContext":"w &lt;/system-reminder&gt;"}}`+"\n" {
		t.Errorf("gemini after-tool = %s", got)
	}
	for name, h := range agentHosts {
		for _, out := range [][]byte{h.context(h.start, "</system-reminder><b>"), h.advise("</x>", "<y>"), h.deny("<z>")} {
			if strings.ContainsAny(string(out), "<>") {
				t.Errorf("%s shows an angle bracket: %s", name, out)
			}
		}
	}
	// Codex rejects unknown keys: the context answer carries only these.
	var v map[string]map[string]string
	json.Unmarshal(agentHosts[Codex].context("SessionStart", "c"), &v)
	if len(v) != 1 || len(v["hookSpecificOutput"]) != 2 {
		t.Errorf("codex context has extra keys: %v", v)
	}
}

func TestHandleFailsOpen(t *testing.T) {
	env := func(string) string { return "" }
	for _, inv := range []Invocation{
		{Host: Claude, Event: "pre-tool-use", Input: []byte("{"), Dir: t.TempDir(), Getenv: env},
		{Host: Claude, Event: "pre-tool-use", Input: []byte(`{"tool_name":"Edit","tool_input":{"file_path":"/x"}}`), Dir: t.TempDir(), Getenv: env},
		{Host: Codex, Event: "session-start", Input: []byte(`{"session_id":"x"}`), Dir: t.TempDir(), Getenv: env},
		{Host: "nohost", Event: "x", Dir: t.TempDir(), Getenv: env},
		{Host: Git, Event: "pre-commit", Dir: t.TempDir(), Getenv: env},
	} {
		ans := Handle(inv)
		if ans.Code != 0 || len(ans.Stdout) != 0 {
			t.Errorf("%s %s: code %d, stdout %q", inv.Host, inv.Event, ans.Code, ans.Stdout)
		}
	}
}
