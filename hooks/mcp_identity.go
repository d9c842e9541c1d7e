package hooks

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/git-rally/git-rally/worktree"
)

// sessionEnv names, per host, the variable in which the host hands its
// session id to the MCP servers it starts (Claude Code does so since
// 2.1.154; Gemini CLI sets GEMINI_SESSION_ID for the processes it runs).
// Codex clears its MCP servers' environment; it names its session in each
// tool call's metadata instead (SessionTool).
var sessionEnv = []struct{ host, env string }{
	{Claude, "CLAUDE_CODE_SESSION_ID"},
	{Gemini, "GEMINI_SESSION_ID"},
}

// HostSessionTool is the identity the agent hooks give the host session
// named in the environment, so an MCP server that the host started acts
// as the same agent as its hooks (a claim taken through the server is the
// agent's own claim when its next edit is checked).
func HostSessionTool(getenv func(string) string) (string, bool) {
	for _, s := range sessionEnv {
		if id := getenv(s.env); id != "" {
			return SessionTool(s.host, id)
		}
	}
	return "", false
}

// SessionTool is the identity the agent hooks of host give its session id
// (Codex states it in each MCP call's metadata, not in the environment).
func SessionTool(host, id string) (string, bool) {
	h, ok := agentHosts[host]
	if !ok {
		return "", false
	}
	if tag := SessionTag(host, id); tag != "" {
		return h.tool + ":" + tag, true
	}
	return "", false
}

// A host that hands its MCP servers no session id (Codex clears their
// environment) still starts them and its hooks as children of one
// process. The hooks that begin a session or a turn (session start, prompt
// submit), when they name themselves after the host's session, note that
// name under the host process (hosts/<pid>-<start time>, so a reused
// pid is another process); the MCP server reads the note of its own host.

// passThrough are the programs between a host and rally: a shell running a
// hook's command line, and git running git-rally for the `git rally hook`
// lines of older versions (and for `git rally mcp`).
var passThrough = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "env": true, "git": true, "git-rally": true}

// hostProcess names the nearest ancestor that is not a pass-through
// program; Linux only (it reads /proc).
func hostProcess() (string, bool) {
	pid := os.Getppid()
	for i := 0; i < 8 && pid > 1; i++ {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return "", false
		}
		s := string(b)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			return "", false
		}
		comm, f := s[open+1:end], strings.Fields(s[end+1:])
		if len(f) < 20 {
			return "", false
		}
		if !passThrough[comm] {
			return fmt.Sprintf("%d-%s", pid, f[19]), true // field 22: start time
		}
		pid, _ = strconv.Atoi(f[1])
	}
	return "", false
}

func hostNote(r *worktree.Repo, key string) string {
	return filepath.Join(r.RallyDir(), "hosts", key)
}

// rememberHost notes tool as the identity of the host process running
// this hook, when it is not noted already.
func rememberHost(r *worktree.Repo, tool string) {
	key, ok := hostProcess()
	if !ok {
		return
	}
	p := hostNote(r, key)
	if b, err := os.ReadFile(p); err == nil && string(b) == tool {
		return
	}
	if os.MkdirAll(filepath.Dir(p), 0o777) == nil {
		writeAtomic(p, []byte(tool), 0o666)
	}
	forgetGoneHosts(filepath.Dir(p))
}

// forgetGoneHosts removes the notes of host processes that have ended.
func forgetGoneHosts(dir string) {
	es, _ := os.ReadDir(dir)
	for _, e := range es {
		pid, start, ok := strings.Cut(e.Name(), "-")
		if !ok {
			continue
		}
		b, err := os.ReadFile("/proc/" + pid + "/stat")
		if err == nil {
			if f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])); len(f) >= 20 && f[19] == start {
				continue
			}
		}
		os.Remove(filepath.Join(dir, e.Name()))
	}
}

// HostProcessTool is the identity the hooks of this process's host noted.
func HostProcessTool(r *worktree.Repo) (string, bool) {
	key, ok := hostProcess()
	if !ok {
		return "", false
	}
	b, err := os.ReadFile(hostNote(r, key))
	if err != nil || len(b) == 0 {
		return "", false
	}
	return string(b), true
}
