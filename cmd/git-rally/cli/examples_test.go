package cli

import (
	"bytes"
	"strings"
	"testing"
)

// Every command of the contract (SPEC 7) shows Examples in its help and
// man page.
func TestExamples(t *testing.T) {
	root := newRootCmd(newFactory(nil, &bytes.Buffer{}, &bytes.Buffer{}))
	root.InitDefaultHelpCmd()
	for _, path := range []string{"init", "enter", "leave", "whoami", "claim", "release", "check", "check before-write",
		"check before-complete", "handoff", "receipt", "resolve", "artifact", "note", "blocker", "risk", "decision",
		"retract", "say", "room", "inbox", "next", "log", "show", "doctor", "worktree add", "worktree list",
		"worktree plan", "worktree remove", "sync", "hooks install", "hooks uninstall", "hooks status", "hook", "demo",
		"version", "help", "man", "completion", "deinit"} {
		c, rest, err := root.Find(strings.Fields(path))
		if err != nil || len(rest) > 0 || c == root {
			t.Errorf("no command %q", path)
			continue
		}
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("git rally %s has no Examples", path)
		}
	}
}
