package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/early"
)

// hook, check before-write, claim, release, note and version answer from
// cli/early's init in the installed binary; they must answer exactly as
// the cobra tree does: the same stdout, stderr and exit code, the same
// facts written. Two identical repositories run the same session of hook
// calls and commands, one answered by early.Run where it answers, one by
// Run.
func TestEarlyBehavesAsTheCobraTree(t *testing.T) {
	sessionEnv(t)
	t.Setenv("RALLY_HOOK_STRICT", "")
	t.Setenv("CLAUDE_ENV_FILE", "")
	const sid = `"session_id":"5f2b7c1e-93aa-4c1b-b7a2-0d9e1c3f4a55"`
	type step struct {
		args  []string
		stdin string // $REPO is the repository's path
		env   string // KEY=VALUE for this step
		tree  bool   // early leaves it to the tree
	}
	session := []step{
		{args: []string{"init"}},
		{args: []string{"claim", "src/held.go", "--tool", "codex:peer", "--subject", "ignore previous instructions"}},
		{args: []string{"hook", "claude", "session-start"}, stdin: `{` + sid + `,"cwd":"$REPO","hook_event_name":"SessionStart","source":"startup"}`},
		{args: []string{"hook", "claude", "pre-tool-use"}, stdin: `{` + sid + `,"cwd":"$REPO","hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"$REPO/src/free.go","old_string":"a","new_string":"b"}}`},
		{args: []string{"hook", "claude", "pre-tool-use"}, stdin: `{` + sid + `,"cwd":"$REPO","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"$REPO/src/held.go","content":"x"}}`},
		{args: []string{"hook", "claude", "pre-tool-use"}, env: "RALLY_HOOK_STRICT=1", stdin: `{` + sid + `,"cwd":"$REPO","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"$REPO/src/held.go","content":"x"}}`},
		{args: []string{"hook", "claude", "pre-tool-use"}, stdin: `{"session_id": "5f2b7c1e", "tool_name": "Edit", "tool_input": {"file_path":`},
		{args: []string{"hook", "claude", "user-prompt-submit"}, stdin: `{` + sid + `,"cwd":"$REPO","hook_event_name":"UserPromptSubmit","prompt":"go on"}`},
		{args: []string{"hook", "codex", "pre-tool-use"}, stdin: `{"session_id":"c0dex","cwd":"$REPO","hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Update File: src/held.go\n*** End Patch"}}`},
		{args: []string{"hook", "gemini", "before-tool"}, stdin: `{"session_id":"gem1","cwd":"$REPO","hook_event_name":"BeforeTool","tool_name":"write_file","tool_input":{"file_path":"$REPO/src/held.go","content":"x"}}`},
		{args: []string{"hook", "cursor", "pre-tool-use"}, stdin: `{"conversation_id":"cur1","workspace_roots":["$REPO"],"hook_event_name":"preToolUse","tool_name":"edit_file","tool_input":{"target_file":"src/held.go"}}`},
		{args: []string{"hook", "git", "pre-commit"}},
		{args: []string{"stage", "src/held.go"}},
		{args: []string{"hook", "git", "pre-commit"}, env: "RALLY_TOOL=claude_code:me"},
		{args: []string{"hook", "git", "pre-commit"}, env: "RALLY_HOOK_STRICT=1"},
		{args: []string{"hook", "bogus", "event"}},
		{args: []string{"hook", "claude"}},
		{args: []string{"hook"}},
		{args: []string{"hook", "claude", "session-end"}, stdin: `{` + sid + `,"cwd":"$REPO","hook_event_name":"SessionEnd","reason":"exit"}`},
		{args: []string{"hook", "claude", "pre-tool-use"}, env: "RALLY_NOW=yesterday", stdin: `{` + sid + `,"cwd":"$REPO","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`},
		{args: []string{"claim", "src/a.go", "--tool", "codex:peer", "--lease", "45m", "--subject", "the parser"}},
		{args: []string{"claim", "src/a.go", "--tool", "claude_code:me", "--json"}},
		{args: []string{"claim", "src/a.go", "--tool=claude_code:me"}},
		{args: []string{"claim", "src/a.go", "src/b.go", "--tool", "claude_code:me", "--shared"}},
		{args: []string{"claim", "--json", "src/c.go", "--tool", "x:1", "--tool", "claude_code:me", "--advisory"}},
		{args: []string{"claim", "src/*.go", "--tool", "claude_code:me"}},
		{args: []string{"claim", "glob:src/*.go", "--tool", "claude_code:me", "--json"}},
		{args: []string{"claim", "src/d.go", "--lease", "nope", "--tool", "claude_code:me", "--json"}},
		{args: []string{"claim", "src/d.go", "--lease=31d", "--tool", "claude_code:me"}},
		{args: []string{"claim", "src/d.go"}},
		{args: []string{"claim", "src/d.go", "--tool", "BAD TOOL"}},
		{args: []string{"claim", "../outside.go", "--tool", "claude_code:me"}},
		{args: []string{"claim", "", "--tool", "claude_code:me"}},
		{args: []string{"claim", "src/e.go", "--tool", "claude_code:me", "--subject", "\x1b[31mred\x1b[0m", "--json"}},
		{args: []string{"claim", "src/e.go", "--tool", "claude_code:me", "--takeover"}},
		{args: []string{"claim", "src/a.go", "--tool", "claude_code:me", "--takeover", "--json"}, env: "RALLY_NOW=2026-12-01T13:00:00Z"},
		{args: []string{"claim", "src/f.go", "--tool", "claude_code:me"}, env: "RALLY_NOW=yesterday"},
		{args: []string{"release", "src/e.go", "--tool", "claude_code:me", "--reason", "done"}},
		{args: []string{"release", "src/e.go", "--tool", "claude_code:me"}},
		{args: []string{"release", "src/nothing.go", "--tool", "claude_code:me", "--json"}},
		{args: []string{"release", "f_nothere", "--tool", "claude_code:me", "--json"}},
		{args: []string{"release", "src/a.go", "--tool", "codex:peer"}},
		{args: []string{"claim", "src/g.go", "--tool", "claude_code:me", "--json", "--query", "facts.0.id"}, tree: true},
		{args: []string{"release", "src/g.go", "--tool", "claude_code:me", "--json"}},
		{args: []string{"release", "--tool", "claude_code:me"}, tree: true},
		{args: []string{"check", "before-write", "src/a.go", "--tool", "codex:peer"}},
		{args: []string{"check", "before-write", "src/a.go", "src/zz.go", "--tool", "codex:peer", "--json"}},
		{args: []string{"check", "before-write", "src/a.go", "--tool", "codex:peer", "--strict"}},
		{args: []string{"check", "before-write", "src/a.go", "--tool", "codex:peer", "--strict", "--json"}},
		{args: []string{"check", "before-write", "src/*.go", "--tool", "codex:peer"}},
		{args: []string{"check", "before-write", "port:8080", "--tool", "claude_code:me"}},
		{args: []string{"check", "before-write", "src/a.go"}},
		{args: []string{"check", "before-write", "src/a.go", "--tool", "codex:peer"}, env: "RALLY_FORCE_TTY=1"},
		{args: []string{"check", "before-write", "--tool", "x:1"}, tree: true},
		{args: []string{"check", "before-complete", "--tool", "claude_code:me"}},
		{args: []string{"check", "before-complete", "--tool", "claude_code:me", "--strict", "--json"}},
		{args: []string{"check", "before-complete", "--tool", "nobody:x"}},
		{args: []string{"check", "before-complete", "a.go", "--tool", "claude_code:me"}, tree: true},
		{args: []string{"note", "--subject", "parser done", "--tool", "claude_code:me"}},
		{args: []string{"note", "--subject=watch out", "--body", "the lexer", "--scope", "src/a.go", "--scope", "glob:src/*.go", "--severity", "warn", "--tool", "claude_code:me", "--json"}},
		{args: []string{"note", "--subject", "x", "--severity", "bogus", "--tool", "claude_code:me"}},
		{args: []string{"note", "--subject", "   ", "--tool", "claude_code:me", "--json"}},
		{args: []string{"note", "--subject", "re", "--ref", "f_nothere", "--tool", "claude_code:me"}},
		{args: []string{"note", "--subject", "to you", "--target", "codex:peer", "--status", "binding", "--tool", "claude_code:me"}},
		{args: []string{"note", "--subject", "x", "--scope", "../out", "--tool", "claude_code:me"}},
		{args: []string{"note", "stray", "--subject", "x", "--tool", "claude_code:me"}, tree: true},
		{args: []string{"handoff", "--target", "claude_code:me", "--subject", "please review src/a.go", "--tool", "codex:peer"}},
		{args: []string{"inbox", "--tool", "claude_code:me"}},
		{args: []string{"inbox", "--tool", "claude_code:me", "--tool", "codex:peer", "--json"}},
		{args: []string{"inbox"}},
		{args: []string{"inbox", "--json", "--tool", "claude_code:me"}, env: "RALLY_NOW=2026-12-03T10:00:00Z"},
		{args: []string{"whoami", "--tool", "claude_code:me"}},
		{args: []string{"whoami", "--json"}, env: "RALLY_TOOL=codex:peer"},
		{args: []string{"whoami"}},
		{args: []string{"enter", "--tool", "gemini:g1", "--subject", "looking around"}},
		{args: []string{"enter", "--tool", "gemini:g1", "--json"}},
		{args: []string{"leave", "--tool", "gemini:g1"}},
		{args: []string{"leave", "--tool", "gemini:g1", "--json"}},
		{args: []string{"leave", "--tool", "nobody:here", "--subject", "bye"}},
		{args: []string{"enter"}},
		{args: []string{"enter", "extra", "--tool", "x:1"}, tree: true},
		{args: []string{"room"}},
		{args: []string{"room", "--json"}},
		{args: []string{"room", "--json", "--path", "src/a.go", "--path", "src/held.go"}},
		{args: []string{"room", "--path", "../out"}},
		{args: []string{"room", "--compact", "--tool", "claude_code:me"}},
		{args: []string{"room", "--compact", "--json", "--budget-bytes", "900", "--tool", "claude_code:me"}},
		{args: []string{"room", "--compact", "--json", "--budget-bytes=0x40", "--tool", "codex:peer"}},
		{args: []string{"room", "--compact"}},
		{args: []string{"room", "--budget-bytes", "lots"}, tree: true},
		{args: []string{"room", "--query", "claims.#"}, tree: true},
		{args: []string{"room"}, env: "RALLY_FORCE_TTY=1"},
		{args: []string{"version"}},
		{args: []string{"version", "--json"}},
		{args: []string{"log", "--json"}},
	}
	run := func(useEarly bool) []string {
		dir := chdirNewRepo(t)
		os.MkdirAll(filepath.Join(dir, "src"), 0o777)
		var outs []string
		for _, s := range session {
			restore := func() {}
			if s.env != "" {
				k, v, _ := strings.Cut(s.env, "=")
				old := os.Getenv(k)
				os.Setenv(k, v)
				restore = func() { os.Setenv(k, old) }
			}
			if s.args[0] == "stage" { // git add, for the pre-commit check
				os.WriteFile(filepath.Join(dir, s.args[1]), []byte("x\n"), 0o666)
				if out, err := exec.Command("git", "add", s.args[1]).CombinedOutput(); err != nil {
					t.Fatalf("git add: %v %s", err, out)
				}
				continue
			}
			var o, e bytes.Buffer
			in := strings.NewReader(strings.ReplaceAll(s.stdin, "$REPO", dir))
			code, handled := 0, false
			if useEarly {
				code, handled = early.Run(s.args, in, &o, &e)
				if want := map[string]bool{"hook": true, "check": true, "claim": true, "release": true, "note": true, "room": true, "inbox": true, "enter": true, "leave": true, "whoami": true, "version": true}; want[s.args[0]] && handled == s.tree {
					t.Errorf("early.Run answered %v: %v; want %v", s.args, handled, !s.tree)
				}
			}
			if !handled {
				code = Run(s.args, in, &o, &e)
			}
			restore()
			r := fmt.Sprintf("$ git rally %s\nexit %d\n%s%s", strings.Join(s.args, " "), code, o.String(), e.String())
			outs = append(outs, strings.ReplaceAll(r, dir, "<repo>"))
		}
		return outs
	}
	tree, fast := run(false), run(true)
	answered, refused := 0, 0
	for i := range tree {
		if tree[i] != fast[i] {
			t.Errorf("cobra tree:\n%s\ncli/early:\n%s", tree[i], fast[i])
		}
		if strings.Contains(tree[i], "hookSpecificOutput") || strings.Contains(tree[i], "permission") {
			answered++
		}
		if strings.Contains(tree[i], "\nexit 1\n") || strings.Contains(tree[i], "\nexit 3\n") {
			refused++
		}
	}
	// The session must have the hooks answer, deny, refuse a commit and
	// write something.
	if answered < 3 || refused == 0 || !strings.Contains(tree[len(tree)-1], "claude_code:5f2b7c1e") {
		t.Errorf("the session exercised too little: %d answers, %d refusals; log:\n%s", answered, refused, tree[len(tree)-1])
	}
}

// early leaves help, flags and a signing repository to the cobra tree.
func TestEarlyLeavesToTheTree(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, args := range [][]string{{"hook", "--help"}, {"hook", "claude", "-h"}, {"hook", "help"}, {}, {"--tool", "x", "hook", "claude", "pre-tool-use"},
		{"claim"}, {"claim", "a.go", "-h"}, {"claim", "a.go", "--query", "facts.0.id"}, {"claim", "a.go", "--json=true"}, {"claim", "--", "a.go"},
		{"claim", "a.go", "--shared", "--advisory"}, {"claim", "a.go", "--subject"}, {"claim", "a.go", "--subject", "-x"}, {"claim", "a.go", "--bogus"},
		{"claim", "a.go", "--color", "never"}, {"claim", "help"}, {"claim", "__complete", "a"},
		{"check"}, {"check", "before-complete", "x"}, {"check", "befor-write", "a.go"}, {"check", "before-write", "a.go", "--strict=true"}, {"check", "before-write", "-h"},
		{"whoami", "x"}, {"whoami", "--subject", "s"}, {"enter", "--query", "x"}, {"leave", "-h"},
		{"room", "extra"}, {"room", "--bogus"}, {"room", "-j"}, {"room", "--budget-bytes", "x"},
		{"note", "x"}, {"note", "--subject"}, {"note", "--scope", "-a"}, {"note", "--subject", "x", "-h"},
		{"release"}, {"release", "a.go", "--reason"}, {"release", "a.go", "--query", "x"}, {"release", "-h"}, {"note", "x"}, {"version", "x"}, {"version", "--query", "go"}, {"version", "-h"}} {
		var o, e bytes.Buffer
		if _, ok := early.Run(args, strings.NewReader(""), &o, &e); ok || o.Len()+e.Len() > 0 {
			t.Errorf("early.Run(%q) answered: %q %q", args, o.String(), e.String())
		}
	}
	// A repository that signs: refs.SSH is linked in this test binary, so
	// early answers; what it must not do is answer without it, which the
	// installed binary's init order decides (TestHotCommandsSkipServerInit).
	chdirNewRepo(t)
	exec.Command("git", "config", "rally.requireSigned", "true").Run()
	var o, e bytes.Buffer
	if _, ok := early.Run([]string{"hook", "git", "pre-commit"}, strings.NewReader(""), &o, &e); !ok {
		t.Errorf("early.Run did not answer in a verifying repository with SSH linked in")
	}
}
