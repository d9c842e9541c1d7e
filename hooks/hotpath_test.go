package hooks

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The hook before every tool call reads no /proc: only the hooks that
// begin a session or a turn note the identity under the host process.
func TestOnlySessionAndTurnHooksNoteTheHost(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("host processes are read from /proc")
	}
	r := testRepo(t)
	notes := filepath.Join(r.RallyDir(), "hosts")
	env := func(string) string { return "" }
	run := func(event, payload string) {
		Handle(Invocation{Host: Codex, Event: event, Dir: r.WorkTree, Getenv: env, Now: time.Now(), Input: []byte(payload)})
	}
	const sid = `"session_id":"019a2b3c-0000-7000-8000-00000000abcd","cwd":"`
	run("pre-tool-use", `{`+sid+r.WorkTree+`","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Add File: a.go\n+x\n*** End Patch"}}`)
	if _, err := os.Stat(notes); err == nil {
		t.Fatal("pre-tool-use noted the host process")
	}
	run("user-prompt-submit", `{`+sid+r.WorkTree+`","prompt":"hi"}`)
	if es, _ := os.ReadDir(notes); len(es) != 1 {
		t.Fatalf("user-prompt-submit left %d host notes, want 1", len(es))
	}
	os.RemoveAll(notes)
	run("session-start", `{`+sid+r.WorkTree+`","source":"startup"}`)
	if es, _ := os.ReadDir(notes); len(es) != 1 {
		t.Fatalf("session-start left %d host notes, want 1", len(es))
	}
}
