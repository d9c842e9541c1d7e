package realhost

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The launch and life of real interactive hosts in managed sessions (SPEC
// §13 "Real hosts in managed sessions"): `git rally run <agent> --task`
// starts the host's own TUI (its own command, no --command-json) in its
// worktree with the caller's environment; the hooks act as the session's
// tool (Codex: from the main checkout's hooks file, approved by rally);
// two Codex sessions keep their own identities (no shared daemon); strict
// mode keeps one session off a file another holds; stop ends the host's
// processes; plan run takes a Claude task and a Codex task through to
// plan close. Hosts are configured as a returning user has them.

// lifeRoom is a repository whose managed sessions run in a private tmux
// server, with the hosts' programs on PATH and each host configured as a
// returning user has it.
type lifeRoom struct {
	*repo
	t     *testing.T
	env   []string
	chome string // CODEX_HOME
}

const lifeClaudeKey = "sk-ant-test-0000000000000000000000"

func newLifeRoom(t *testing.T, hooksHost string) *lifeRoom {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("tmux is not installed")
		}
		t.Skip("tmux is not installed")
	}
	r := newRepo(t, hooksHost)
	tmuxDir, err := os.MkdirTemp("", "rl")
	if err != nil {
		t.Fatal(err)
	}
	_, chome := codexHome(r)
	claudeDir := filepath.Join(hostsDir, "@anthropic-ai", "claude-code-linux-x64")
	path := binDir + string(os.PathListSeparator) + claudeDir + string(os.PathListSeparator) +
		filepath.Join(hostsDir, ".bin") + string(os.PathListSeparator) + os.Getenv("PATH")
	env := r.env("TMUX_TMPDIR="+tmuxDir, "TMUX=", "TERM=xterm-256color",
		"ANTHROPIC_BASE_URL="+r.srv.url, "ANTHROPIC_API_KEY="+lifeClaudeKey,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
		"CODEX_HOME="+chome, "MOCK_API_KEY=test-key",
		"GEMINI_API_KEY=test-key", "GOOGLE_GEMINI_BASE_URL="+r.srv.url, "GEMINI_CLI_NO_RELAUNCH=true")
	env = append(env, "PATH="+path) // the last PATH wins
	l := &lifeRoom{repo: r, t: t, env: env, chome: chome}
	t.Cleanup(func() {
		kill := exec.Command("tmux", "kill-server")
		kill.Env = env
		kill.Run() // this test's private server only
		os.RemoveAll(tmuxDir)
	})
	l.returningUser()
	// A tmux server already runs, started before the keys and base URLs
	// were exported (a person's tmux): the sessions must still get run's
	// environment, not the server's.
	keep := exec.Command("tmux", "new-session", "-d", "-s", "keep", "sleep", "86400")
	keep.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + l.home, "TMUX_TMPDIR=" + tmuxDir, "TERM=xterm-256color"}
	if out, err := keep.CombinedOutput(); err != nil {
		t.Fatalf("starting a tmux server: %v\n%s", err, out)
	}
	return l
}

// returningUser writes each host's state as a person who used it before
// in this repository has it: no first-run dialog waits.
func (l *lifeRoom) returningUser() {
	state := map[string]any{
		"hasCompletedOnboarding": true, "lastOnboardingVersion": "2.1.332", "theme": "dark", "numStartups": 5,
		"customApiKeyResponses":   map[string]any{"approved": []string{lifeClaudeKey[len(lifeClaudeKey)-20:]}, "rejected": []string{}},
		"hasSeenAutoDefaultNudge": true,
		"projects": map[string]any{l.dir: map[string]any{"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true,
			"projectOnboardingSeenCount": 1}},
	}
	b, _ := json.Marshal(state)
	os.WriteFile(filepath.Join(l.home, ".claude.json"), b, 0o644)
	os.MkdirAll(filepath.Join(l.home, ".claude"), 0o755)
	os.WriteFile(filepath.Join(l.home, ".claude", "settings.json"),
		[]byte(`{"permissions":{"defaultMode":"acceptEdits","allow":["Write","Edit","Bash"]}}`), 0o644)

	cfg, _ := os.ReadFile(filepath.Join(l.chome, "config.toml"))
	cfg = append(cfg, []byte("\n[tui]\nshow_tooltips = false\n\n[notice]\nhide_full_access_warning = true\nhide_rate_limit_model_nudge = true\nhide_world_writable_warning = true\n\n[notice.model_migrations]\n\"gpt-5.5\" = \"gpt-6-sol\"\n")...)
	os.WriteFile(filepath.Join(l.chome, "config.toml"), cfg, 0o644)

	gdir := filepath.Join(l.home, ".gemini")
	os.MkdirAll(gdir, 0o755)
	trust, _ := json.Marshal(map[string]string{l.dir: "TRUST_FOLDER"})
	os.WriteFile(filepath.Join(gdir, "trustedFolders.json"), trust, 0o644)
	os.WriteFile(filepath.Join(gdir, "settings.json"), []byte(`{"security":{"auth":{"selectedType":"gemini-api-key"}},`+
		`"model":{"name":"gemini-2.5-pro"},"privacy":{"usageStatisticsEnabled":false},`+
		`"general":{"disableAutoUpdate":true,"disableUpdateNag":true},"ui":{"hideTips":true,"hideBanner":true}}`), 0o644)
}

// rallyEnv runs git-rally in the repository with the room's environment
// and extra variables (the caller's shell at that moment).
func (l *lifeRoom) rallyEnv(extra []string, args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(binDir, "git-rally"), args...)
	cmd.Dir, cmd.Env = l.dir, append(append([]string(nil), l.env...), extra...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (l *lifeRoom) must(args ...string) string {
	l.t.Helper()
	out, err := l.rallyEnv(nil, args...)
	if err != nil {
		l.t.Fatalf("git rally %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// lifeSession is one session `git rally run` started.
type lifeSession struct {
	l       *lifeRoom
	Session string `json:"session"`
	Tool    string `json:"tool"`
	Command []string
}

// start runs `git rally run <args> --json` with extra variables in the
// caller's environment.
func (l *lifeRoom) start(extra []string, args ...string) *lifeSession {
	l.t.Helper()
	// --json before a "--" that starts the host args
	out, err := l.rallyEnv(extra, append([]string{"run", args[0], "--json"}, args[1:]...)...)
	if err != nil {
		l.t.Fatalf("git rally run %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	s := &lifeSession{l: l}
	if i := strings.Index(out, "{"); i < 0 || json.Unmarshal([]byte(out[i:]), s) != nil || s.Session == "" {
		l.t.Fatalf("git rally run %s: no session in %s", strings.Join(args, " "), out)
	}
	return s
}

func (s *lifeSession) tmux(args ...string) string {
	cmd := exec.Command("tmux", args...)
	cmd.Env = s.l.env
	out, _ := cmd.CombinedOutput()
	return string(out)
}

func (s *lifeSession) screen() string {
	return s.tmux("capture-pane", "-p", "-J", "-t", "=rally-"+s.Session+":", "-S", "-60")
}

// worktreeFile reads a file of the session's worktree.
func (s *lifeSession) worktreeFile(rel string) (string, bool) {
	return s.l.read(filepath.Join(".rally", "worktrees", s.Session, rel))
}

// state is the session's state as sessions --json shows it.
func (s *lifeSession) state() string {
	var out struct {
		Sessions []struct{ Session, State string } `json:"sessions"`
	}
	json.Unmarshal([]byte(s.l.must("sessions", "--json")), &out)
	for _, x := range out.Sessions {
		if x.Session == s.Session {
			return x.State
		}
	}
	return ""
}

// until polls cond every 200 ms until it holds or d passed.
func until(d time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// claimedBy says whether tool holds a claim of file:path now.
func (l *lifeRoom) claimedBy(tool, path string) bool { return l.claimed(tool, path) }

// paneProcs lists the processes the session's pane started: every
// process whose environment carries the pane (TMUX_PANE and the private
// server's socket), as `ps` would find them.
func (s *lifeSession) paneProcs() []string {
	pane := strings.TrimSpace(s.tmux("display-message", "-p", "-t", "=rally-"+s.Session+":", "#{pane_id}\t#{socket_path}"))
	id, sock, _ := strings.Cut(pane, "\t")
	if id == "" || sock == "" {
		return nil
	}
	return procsWith(func(env []string) bool {
		return hasEnv(env, "TMUX_PANE="+id) && hasEnvPrefix(env, "TMUX="+sock+",")
	})
}

// procsWith lists "pid cmdline" of the processes whose environment env
// accepts (zombies left out).
func procsWith(match func(env []string) bool) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if i := strings.LastIndexByte(string(st), ')'); i < 0 || strings.HasPrefix(strings.TrimSpace(string(st[i+1:])), "Z") {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil || !match(strings.Split(string(b), "\x00")) {
			continue
		}
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		out = append(out, fmt.Sprintf("%d %s", pid, strings.ReplaceAll(strings.TrimRight(string(cmd), "\x00"), "\x00", " ")))
	}
	return out
}

func hasEnv(env []string, kv string) bool {
	for _, e := range env {
		if e == kv {
			return true
		}
	}
	return false
}

func hasEnvPrefix(env []string, p string) bool {
	for _, e := range env {
		if strings.HasPrefix(e, p) {
			return true
		}
	}
	return false
}

// stopEndsAll stops the session and checks that none of the processes
// its pane started runs afterwards.
func (s *lifeSession) stopEndsAll(t *testing.T, name string) {
	t.Helper()
	before := s.paneProcs()
	out := s.l.must("stop", s.Session)
	left := s.paneProcs()
	if len(left) > 0 {
		// a process that leaves the tree carries TMUX too; ask by socket
		time.Sleep(500 * time.Millisecond)
		left = s.paneProcs()
	}
	check(t, len(before) > 0 && len(left) == 0, fmt.Sprintf("%s: stop ended every process the session started (%d before, %d after)", name, len(before), len(left)),
		"before", before, "after", left, out)
	check(t, s.state() == "stopped", name+": the session is stopped")
}

// waitTurn waits until the scripted model answered the session's last
// step (a final "done" follows the script) or its file appears.
func (s *lifeSession) waitFile(rel, want string, d time.Duration) bool {
	return until(d, func() bool { got, _ := s.worktreeFile(rel); return got == want })
}

func TestLifecycleClaudeTUI(t *testing.T) {
	t.Parallel()
	l := newLifeRoom(t, "claude")
	wtFile := func(s string) string { return filepath.Join(l.dir, ".rally", "worktrees", s, "src", "claude.go") }
	s := l.start(nil, "claude", "--task", script(
		step{Tool: "Write", Input: map[string]any{"file_path": wtFile("claude-01"), "content": "package src // claude\n"}},
	))
	check(t, s.Tool == "claude_code:01", "claude: run claude --task started the interactive TUI as claude_code:01", s.Tool)
	ok := s.waitFile(filepath.Join("src", "claude.go"), "package src // claude\n", 90*time.Second)
	check(t, ok, "claude: the TUI took the task as its first prompt and wrote its file in its own worktree", s.screen())
	check(t, until(20*time.Second, func() bool { return l.claimedBy("claude_code:01", "src/claude.go") }),
		"claude: its edit was claimed by claude_code:01, the session's tool, through the hooks in its worktree")
	check(t, ok && s.state() == "live", "claude: after its turn the TUI still runs (live)", s.state())
	s.stopEndsAll(t, "claude")
	l.dump()
}

func TestLifecycleGeminiTUI(t *testing.T) {
	t.Parallel()
	l := newLifeRoom(t, "gemini")
	wtFile := filepath.Join(l.dir, ".rally", "worktrees", "gemini-01", "src", "gem.go")
	// host args after "--": Gemini's own approval mode for edits
	s := l.start(nil, "gemini", "--task", script(
		step{Tool: "write_file", Input: map[string]any{"file_path": wtFile, "content": "package src // gemini\n"}},
	), "--", "--approval-mode", "auto_edit")
	check(t, s.Tool == "gemini:01" && strings.Contains(strings.Join(s.Command, " "), "gemini --approval-mode auto_edit --prompt-interactive="),
		"gemini: run gemini --task -- --approval-mode auto_edit started the TUI with the host args before its first prompt", s.Command)
	ok := s.waitFile(filepath.Join("src", "gem.go"), "package src // gemini\n", 120*time.Second)
	check(t, ok, "gemini: the TUI took the task as its first prompt and wrote its file in its own worktree", s.screen())
	check(t, until(20*time.Second, func() bool { return l.claimedBy("gemini:01", "src/gem.go") }),
		"gemini: its edit was claimed by gemini:01, the session's tool")
	s.stopEndsAll(t, "gemini")
	l.dump()
}

// codexPatch is an apply_patch adding or updating one file.
func codexPatch(op, path, body string) string {
	return "*** Begin Patch\n*** " + op + " File: " + path + "\n" + body + "*** End Patch\n"
}

func TestLifecycleCodexTUI(t *testing.T) {
	t.Parallel()
	l := newLifeRoom(t, "claude")
	// a file of the base both sessions have
	l.write("src/shared.go", "package src // base\n")
	l.git("add", "src/shared.go")
	l.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "shared")

	// Two Codex sessions with one CODEX_HOME, each with its own identity.
	s1 := l.start(nil, "codex", "--task", script(
		step{Tool: "apply_patch", Custom: codexPatch("Add", "src/one.go", "+package src // one\n")},
	))
	s2 := l.start(nil, "codex", "--task", script(
		step{Tool: "apply_patch", Custom: codexPatch("Add", "src/two.go", "+package src // two\n")},
	))
	check(t, s1.Tool == "codex:01" && s2.Tool == "codex:02" && strings.Contains(strings.Join(s1.Command, " "), "codex --no-daemon"),
		"codex: two run codex --task sessions, codex:01 and codex:02, each its own process (--no-daemon)", s1.Command)
	check(t, s1.waitFile("src/one.go", "package src // one\n", lifeWait), "codex: codex:01's TUI took its task and patched its worktree", s1.screen())
	check(t, s2.waitFile("src/two.go", "package src // two\n", lifeWait), "codex: codex:02's TUI took its task and patched its worktree", s2.screen())
	check(t, until(20*time.Second, func() bool { return l.claimedBy("codex:01", "src/one.go") }),
		"codex: codex:01 claimed its file as itself (hooks from the main checkout's .codex/hooks.json, approved by run)")
	check(t, until(20*time.Second, func() bool { return l.claimedBy("codex:02", "src/two.go") }) &&
		!l.claimedBy("codex:01", "src/two.go") && !l.claimedBy("codex:02", "src/one.go"),
		"codex: codex:02 claimed its file as itself, and neither session claimed as the other")

	// Strict mode from the caller's environment at run time: claude-01
	// holds src/shared.go, codex-03 must not change it.
	holder := l.start(nil, "claude", "--scope", "src/shared.go")
	s3 := l.start([]string{"RALLY_HOOK_STRICT=1"}, "codex", "--task", script(
		step{Tool: "apply_patch", Custom: codexPatch("Update", "src/shared.go", "@@\n-package src // base\n+package src // overwritten\n")},
		step{Tool: "apply_patch", Custom: codexPatch("Add", "src/after.go", "+package src // after\n")},
	))
	ran := s3.waitFile("src/after.go", "package src // after\n", lifeWait)
	got, _ := s3.worktreeFile("src/shared.go")
	check(t, ran && got == "package src // base\n", "codex: under RALLY_HOOK_STRICT=1 (exported before run) codex:03 ran its script but could not change src/shared.go, which claude_code:01 holds (file unchanged)", got, s3.screen())
	check(t, l.srv.saw("src/shared.go is claimed by claude_code:01"), "codex: the denial reason reached the model")

	// stop ends every Codex process; no daemon outlives the sessions.
	for _, s := range []*lifeSession{s1, s2, s3} {
		s.stopEndsAll(t, "codex "+s.Session)
	}
	holder.stopEndsAll(t, "claude (holder)")
	// Every Codex process of this test's user (its HOME), a daemon that
	// left the tmux session included.
	codexes := func() []string {
		var out []string
		for _, p := range procsWith(func(env []string) bool { return hasEnv(env, "HOME="+l.home) }) {
			if strings.Contains(p, "codex") {
				out = append(out, p)
			}
		}
		return out
	}
	check(t, len(codexes()) == 0 && len(s1.l.find("claim", "codex:01")) > 0, "codex: after stop no Codex process runs (no shared daemon outlives the sessions)", codexes())
	l.dump()
}

func TestLifecyclePlanRun(t *testing.T) {
	t.Parallel()
	l := newLifeRoom(t, "claude")
	report := func(task string) string {
		return "git add -A && git commit -qm " + task + " && git rally plan report lifeplan/" + task + " --evidence 'made it' --revision HEAD"
	}
	wt := func(s string) string { return filepath.Join(l.dir, ".rally", "worktrees", s) }
	plan := map[string]any{"id": "lifeplan", "goal": "two agents", "tasks": []any{
		map[string]any{"id": "api", "agent": "claude", "owns": []string{"dir:src/api"}, "goal": script(
			step{Tool: "Write", Input: map[string]any{"file_path": filepath.Join(wt("claude-api-01"), "src", "api", "a.go"), "content": "package api\n"}},
			step{Tool: "Bash", Input: map[string]any{"command": report("api"), "description": "report"}},
		)},
		map[string]any{"id": "web", "agent": "codex", "owns": []string{"dir:src/web"}, "args": []string{"-c", "model_reasoning_effort=\"low\""}, "goal": script(
			step{Tool: "apply_patch", Custom: codexPatch("Add", "src/web/w.go", "+package web\n")},
			step{Tool: "exec_command", Input: map[string]any{"cmd": report("web"), "login": false}},
		)},
	}}
	b, _ := json.Marshal(plan)
	pf := filepath.Join(l.home, "plan.json")
	os.WriteFile(pf, b, 0o644)
	l.must("plan", "start", pf, "--tool", "lead")
	out := l.must("plan", "run", "lifeplan", "--json")
	check(t, strings.Contains(out, `"session": "claude-api-01"`) && strings.Contains(out, `"session": "codex-web-01"`) &&
		strings.Contains(out, `"model_reasoning_effort=\"low\""`),
		"plan run: a Claude task and a Codex task started in their own sessions (the Codex task's args on its command line)", out)
	var st struct {
		CanClose bool `json:"can_close"`
		Tasks    []struct{ ID, State string }
	}
	done := until(180*time.Second, func() bool {
		json.Unmarshal([]byte(l.must("plan", "status", "lifeplan", "--json")), &st)
		return st.CanClose
	})
	check(t, done, "plan run: both agents reported their task with evidence as their sessions' tools", st.Tasks)
	if !done {
		for _, s := range []string{"claude-api-01", "codex-web-01"} {
			ls := &lifeSession{l: l, Session: s}
			t.Logf("%s screen:\n%s", s, ls.screen())
		}
	}
	_, err := l.rallyEnv(nil, "plan", "close", "lifeplan", "--tool", "lead")
	check(t, err == nil, "plan run: the lead closed the plan", err)
	for _, s := range []string{"claude-api-01", "codex-web-01"} {
		ls := &lifeSession{l: l, Session: s}
		ls.stopEndsAll(t, "plan run "+s)
	}
	l.dump()
}

// lifeWait is how long a TUI may take for a scripted turn.
var lifeWait = func() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("RALLY_REALHOST_TURN")); err == nil {
		return d
	}
	return 120 * time.Second
}()

// TestLifecycleDiesAtOnce: a real host that refuses its arguments is not
// "started": run reports it exited, with its error, exit 1, and the
// session keeps its story.
func TestLifecycleDiesAtOnce(t *testing.T) {
	t.Parallel()
	l := newLifeRoom(t, "claude")
	out, err := l.rallyEnv(nil, "run", "codex", "--task", "look around", "--", "--bogus-flag")
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	check(t, code == 1 && !strings.Contains(out, "started") && strings.Contains(out, "codex-01 exited at once (exit status 2)") &&
		strings.Contains(out, "unexpected argument '--bogus-flag'"),
		"codex: run codex -- --bogus-flag (Codex refuses it): exit 1, exited at once with its status and its error, not \"started\"", code, out)
	var s struct {
		Sessions []struct {
			State      string `json:"state"`
			ExitStatus *int   `json:"exit_status"`
		} `json:"sessions"`
	}
	json.Unmarshal([]byte(l.must("sessions", "--json")), &s)
	check(t, len(s.Sessions) == 1 && s.Sessions[0].State == "exited" && s.Sessions[0].ExitStatus != nil && *s.Sessions[0].ExitStatus == 2,
		"codex: sessions shows codex-01 exited with exit_status 2", s.Sessions)
	l.must("stop", "codex-01")
}
