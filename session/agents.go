package session

import (
	"fmt"
	"strings"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/hooks"
	"github.com/git-rally/git-rally/worktree"
)

// Host is an agent host rally knows how to launch: its names, the tool
// family of its ids, how it is started with and without a first prompt,
// and which of rally's host hooks coordinate it.
type Host struct {
	Agent   string   // canonical name and session id prefix: claude-01
	Family  string   // tool id family: claude_code:01
	Aliases []string // what `run` accepts
	Argv    []string // the program and rally's own flags
	Prompt  []string // added after the host args with --task; the word "{task}" becomes the task
	Hooks   string   // the hooks host installed in its worktree, "" for none
	Install string   // how to install the program (run's preflight hint)
}

// Program is the executable the host runs as.
func (h Host) Program() string { return h.Argv[0] }

// Hosts is the one table of launch commands (docs/hosts.md). Each takes
// the task as its first prompt in an interactive session; "--" or the
// "=" form keeps a task that starts with "-" from being read as a flag.
// Codex runs --no-daemon: sessions sharing one CODEX_HOME would
// otherwise attach to one background server that runs every session's
// tools and hooks with the first session's environment.
var Hosts = []Host{
	{Agent: "claude", Family: "claude_code", Aliases: []string{"claude", "claude_code", "claude-code"},
		Argv: []string{"claude"}, Prompt: []string{"--", "{task}"}, Hooks: hooks.Claude,
		Install: "npm install -g @anthropic-ai/claude-code"},
	{Agent: "codex", Family: "codex", Aliases: []string{"codex"},
		Argv: []string{"codex", "--no-daemon"}, Prompt: []string{"--", "{task}"}, Hooks: hooks.Codex,
		Install: "npm install -g @openai/codex"},
	{Agent: "gemini", Family: "gemini", Aliases: []string{"gemini"},
		Argv: []string{"gemini"}, Prompt: []string{"--prompt-interactive={task}"}, Hooks: hooks.Gemini,
		Install: "npm install -g @google/gemini-cli"},
	{Agent: "opencode", Family: "opencode", Aliases: []string{"opencode", "oc"},
		Argv: []string{"opencode"}, Prompt: []string{"--prompt={task}"},
		Install: "npm install -g opencode-ai"},
}

// LookupHost returns the host an agent name or alias names.
func LookupHost(name string) (Host, bool) {
	for _, h := range Hosts {
		for _, a := range h.Aliases {
			if a == name {
				return h, true
			}
		}
	}
	return Host{}, false
}

// Command is the argv that starts the host: its program and flags, then
// the caller's host args, then task as its first prompt (none when task
// is "").
func (h Host) Command(task string, args ...string) []string {
	out := append(append([]string(nil), h.Argv...), args...)
	if task == "" {
		return out
	}
	for _, w := range h.Prompt {
		out = append(out, strings.ReplaceAll(w, "{task}", task))
	}
	return out
}

// Agent resolves the agent argument of run: a known host, or any other
// label when the caller gives the command itself.
func Agent(label string, custom bool) (Host, error) {
	if h, ok := LookupHost(label); ok {
		return h, nil
	}
	if !custom {
		return Host{}, &facts.UsageError{Msg: fmt.Sprintf("unknown agent %q: rally launches claude, codex, gemini and opencode", label),
			Hint: fmt.Sprintf("git rally run %s --command-json '[\"%s\"]'", worktree.SanitizeName(label), worktree.SanitizeName(label))}
	}
	if err := checkLabel("agent", label); err != nil {
		return Host{}, err
	}
	return Host{Agent: label, Family: label}, nil
}

// checkLabel accepts what can be part of a session id, a branch and a
// tool id: lowercase letters, digits, '_' and inner '-' or '.'.
func checkLabel(what, s string) error {
	ok := s != "" && len(s) <= 32 && worktree.SanitizeName(s) == s
	for _, r := range s {
		if r >= 'A' && r <= 'Z' {
			ok = false
		}
	}
	if !ok {
		return &facts.UsageError{Msg: fmt.Sprintf("bad %s %q: use lowercase letters, digits, '_', '-' and '.' (at most 32)", what, s)}
	}
	return nil
}

// CheckCommand validates a --command-json argv: a non-empty JSON array of
// non-empty strings without NUL.
func CheckCommand(argv []string) error {
	if len(argv) == 0 {
		return &facts.UsageError{Msg: "--command-json is an empty array: name the program to run", Hint: `--command-json '["./agent.sh", "--flag"]'`}
	}
	for i, a := range argv {
		if a == "" {
			return &facts.UsageError{Msg: fmt.Sprintf("--command-json: argument %d is empty", i)}
		}
		if strings.ContainsRune(a, 0) {
			return &facts.UsageError{Msg: fmt.Sprintf("--command-json: argument %d contains NUL", i)}
		}
	}
	return nil
}

// IDs returns the next session id and tool id for host in this room:
// <agent>[-<name>]-NN and <family>:[<name>-]NN, NN one more than the
// highest number any session of that prefix ever had here.
func IDs(st *facts.State, h Host, name string) (session, tool string, err error) {
	if name != "" {
		if err := checkLabel("--name", name); err != nil {
			return "", "", err
		}
	}
	prefix := h.Agent + "-"
	toolPrefix := h.Family + ":"
	if name != "" {
		prefix += name + "-"
		toolPrefix += name + "-"
	}
	max := 0
	for id := range st.Sessions {
		if n, ok := numbered(id, prefix); ok && n > max {
			max = n
		}
	}
	n := fmt.Sprintf("%02d", max+1)
	return prefix + n, toolPrefix + n, nil
}

func numbered(id, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(id, prefix)
	if !ok || rest == "" || len(rest) > 6 {
		return 0, false
	}
	n := 0
	for _, r := range rest {
		if r < '0' || r > '9' {
			return 0, false
		}
		n = n*10 + int(r-'0')
	}
	return n, true
}
