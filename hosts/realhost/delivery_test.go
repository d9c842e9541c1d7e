package realhost

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// tui is an interactive host launched by `git rally run` in a private
// tmux server, driven as a person drives it: the test reads its terminal
// and types into it only what a person would (a prompt, the answer to a
// permission dialog); rally never types into it but at its idle prompt.
type tui struct {
	r       *repo
	env     []string
	session string // claude-01
	tool    string // claude_code:01
}

func needTmux(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("tmux is not installed")
		}
		t.Skip("tmux is not installed")
	}
}

// launch runs `git rally run <agent> --command-json argv` with env.
func launch(t *testing.T, r *repo, agent string, argv []string, env []string) *tui {
	t.Helper()
	tmuxDir, err := os.MkdirTemp("", "rh")
	if err != nil {
		t.Fatal(err)
	}
	env = append(env, "TMUX_TMPDIR="+tmuxDir, "TMUX=")
	u := &tui{r: r, env: env}
	t.Cleanup(func() {
		// the host's processes (and the hooks they run at their end)
		// must be gone before the repository is removed
		pids := descendants(u.tmux("list-panes", "-a", "-F", "#{pane_pid}"))
		kill := exec.Command("tmux", "kill-server")
		kill.Env = env
		kill.Run() // this test's private server only
		waitFor(15*time.Second, func() bool {
			for _, p := range pids {
				if _, err := os.Stat(fmt.Sprintf("/proc/%d", p)); err == nil {
					return false
				}
			}
			return true
		})
		os.RemoveAll(tmuxDir)
	})
	b, _ := json.Marshal(argv)
	var out struct{ Session, Tool string }
	json.Unmarshal([]byte(u.rally("run", agent, "--command-json", string(b), "--json")), &out)
	u.session, u.tool = out.Session, out.Tool
	if u.session == "" {
		t.Fatalf("run %s named no session", agent)
	}
	return u
}

// descendants are the given pids (one a line) and all their descendants.
func descendants(list string) []int {
	parent := map[int]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		var pid, ppid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so cut after ")"
		if i := strings.LastIndexByte(string(b), ')'); i > 0 {
			var state string
			fmt.Sscan(string(b[i+1:]), &state, &ppid)
			parent[pid] = ppid
		}
	}
	var out []int
	in := map[int]bool{}
	for _, f := range strings.Fields(list) {
		var p int
		if _, err := fmt.Sscan(f, &p); err == nil {
			in[p] = true
		}
	}
	for changed := true; changed; {
		changed = false
		for pid, pp := range parent {
			if in[pp] && !in[pid] {
				in[pid], changed = true, true
			}
		}
	}
	for p := range in {
		out = append(out, p)
	}
	return out
}

func (u *tui) rally(args ...string) string {
	u.r.t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "git-rally"), args...)
	cmd.Dir, cmd.Env = u.r.dir, u.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		u.r.t.Fatalf("git rally %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (u *tui) tmux(args ...string) string {
	cmd := exec.Command("tmux", args...)
	cmd.Env = u.env
	out, _ := cmd.CombinedOutput()
	return string(out)
}

func (u *tui) screen() string {
	return u.tmux("capture-pane", "-p", "-J", "-t", "=rally-"+u.session+":", "-S", "-60")
}

// typeLine types text and Enter into the host, as a person at the keyboard.
func (u *tui) typeLine(text string) {
	u.tmux("send-keys", "-t", "=rally-"+u.session+":", "-l", text)
	time.Sleep(time.Second) // let the TUI take the text before Enter
	u.tmux("send-keys", "-t", "=rally-"+u.session+":", "Enter")
}

// activity is the session's activity as sessions --json shows it.
func (u *tui) activity() string {
	var s struct {
		Sessions []struct{ Session, Activity string } `json:"sessions"`
	}
	json.Unmarshal([]byte(u.rally("sessions", "--json")), &s)
	for _, x := range s.Sessions {
		if x.Session == u.session {
			return x.Activity
		}
	}
	return ""
}

// waitFor polls cond until it holds or the time is up.
func waitFor(d time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// receiptBy says whether a receipt of handoff id by tool is in the ledger.
func (u *tui) receiptBy(id, tool string) bool {
	var fs []struct{ Kind, Tool, Ref string }
	json.Unmarshal([]byte(u.rally("log", "--json")), &fs)
	for _, f := range fs {
		if f.Kind == "receipt" && f.Ref == id && f.Tool == tool {
			return true
		}
	}
	return false
}

// handoff sends the session a handoff whose subject is a script the
// scripted model follows when the handoff reaches it: it acknowledges the
// handoff with the command the delivered message ends with.
func (u *tui) handoff(marker string) (id string, delivery map[string]any) {
	subject := script(step{Tool: u.shellTool(), Input: u.shellInput("RALLYACK")}) + " " + marker
	var out struct {
		Facts    []struct{ ID string } `json:"facts"`
		Delivery map[string]any        `json:"delivery"`
	}
	raw := u.rally("handoff", "--target", u.tool, "--tool", "codex:lead", "--subject", subject, "--json")
	json.Unmarshal([]byte(raw), &out)
	if len(out.Facts) == 0 {
		u.r.t.Fatalf("handoff: %s", raw)
	}
	return out.Facts[0].ID, out.Delivery
}

func (u *tui) shellTool() string {
	switch {
	case strings.HasPrefix(u.tool, "gemini"):
		return "run_shell_command"
	case strings.HasPrefix(u.tool, "codex"):
		return "exec_command"
	}
	return "Bash"
}

func (u *tui) shellInput(command string) map[string]any {
	switch u.shellTool() {
	case "exec_command":
		return map[string]any{"cmd": command, "login": false}
	}
	return map[string]any{"command": command, "description": "test step"}
}

// timeHooks puts a git-rally in front of the real one on the host's PATH
// that logs how long each hook call took (its whole process, as the host
// waits for it; the wrapper's own sh and date add about 2 ms). It returns
// the environment to launch with and the log.
func timeHooks(t *testing.T, env []string) ([]string, string) {
	dir := t.TempDir()
	log := filepath.Join(dir, "hooks.log")
	sh := "#!/bin/sh\ns=$(date +%s%N)\n\"" + filepath.Join(binDir, "git-rally") + "\" \"$@\"\nrc=$?\ne=$(date +%s%N)\n" +
		"[ \"$1\" = hook ] && echo \"$2 $3 $(( (e - s) / 1000 ))\" >> \"" + log + "\"\nexit $rc\n"
	if err := os.WriteFile(filepath.Join(dir, "git-rally"), []byte(sh), 0o755); err != nil {
		t.Fatal(err)
	}
	out := append([]string(nil), env...)
	for i, kv := range out {
		if strings.HasPrefix(kv, "PATH=") {
			out[i] = "PATH=" + dir + string(os.PathListSeparator) + strings.TrimPrefix(kv, "PATH=")
		}
	}
	return out, log
}

// hookLatency reports the median and p90 of the hook calls logged, per
// event and in all.
func hookLatency(t *testing.T, name, log string) {
	b, _ := os.ReadFile(log)
	per := map[string][]float64{}
	var all []float64
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var host, event string
		var us float64
		if _, err := fmt.Sscan(line, &host, &event, &us); err != nil {
			continue
		}
		per[event] = append(per[event], us/1000)
		all = append(all, us/1000)
	}
	var parts []string
	for ev, ms := range per {
		m, p := quantiles(ms)
		parts = append(parts, fmt.Sprintf("%s n=%d median %.0f p90 %.0f", ev, len(ms), m, p))
	}
	sort.Strings(parts)
	m, p := quantiles(all)
	t.Logf("%s: hook latency inside the host over %d calls: median %.0f ms, p90 %.0f ms (%s)", name, len(all), m, p, strings.Join(parts, "; "))
}

// quantiles of durations in milliseconds.
func quantiles(ms []float64) (median, p90 float64) {
	if len(ms) == 0 {
		return 0, 0
	}
	sort.Float64s(ms)
	return ms[len(ms)/2], ms[(len(ms)*9)/10]
}

// deliveryChecks are the two checks of SPEC §13's delivery on a real TUI:
// a handoff at the idle prompt reaches the model and the receipt is the
// session's own; a handoff while the host waits at a permission prompt is
// queued, answers nothing (no marker file), and reaches the model after
// the person answered the prompt.
func deliveryChecks(t *testing.T, u *tui, name, prompt string) {
	r := u.r
	// The first prompt (given at launch) ends a turn: the host is idle.
	// (Not fatal: a rally without activity reports goes on to show what
	// its delivery does at the prompt.)
	idle := waitFor(90*time.Second, func() bool { return u.activity() == "idle" }) ||
		!waitFor(20*time.Second, func() bool { return strings.Contains(u.screen(), "done") })
	check(t, idle, name+": after its first turn the session reports idle (from the host's own turn-end hook)", u.activity())

	// 1. At the idle prompt: pasted, reaches the model, acknowledged by the session's tool.
	id, d := u.handoff("rally-idle-marker")
	check(t, d["queued"] == false && d["delivery"] == "sent_unverified", name+": a handoff at the idle prompt is delivered at once", d)
	check(t, waitFor(60*time.Second, func() bool { return r.srv.saw("rally-idle-marker") }), name+": the handoff pasted at the idle prompt reached the model (read from the server's requests)")
	check(t, waitFor(60*time.Second, func() bool { return u.receiptBy(id, u.tool) }), name+": the receipt was written by "+u.tool+", the session's own tool")
	check(t, waitFor(60*time.Second, func() bool { return u.activity() == "idle" }), name+": idle again after the handoff's turn", u.activity())
	if prompt == "" {
		return
	}

	// 2. At a permission prompt: the person's prompt asks to run a command
	// that creates the marker; the host asks the person.
	// in the session's worktree: Gemini CLI's policy denies a command on a
	// path outside its workspace without asking
	marker := filepath.Join(r.dir, ".rally", "worktrees", u.session, "rally-marker")
	ask := u.shellInput("touch " + marker)
	if u.shellTool() == "exec_command" {
		// Codex asks only for a command the model wants run outside its sandbox
		ask["sandbox_permissions"], ask["justification"] = "require_escalated", "the test asks"
	}
	u.typeLine(script(step{Tool: u.shellTool(), Input: ask}))
	asked := waitFor(60*time.Second, func() bool { return strings.Contains(u.screen(), prompt) })
	if !asked {
		t.Fatalf("FAIL %s: no permission prompt %q; screen:\n%s", name, prompt, u.screen())
	}
	check(t, waitFor(20*time.Second, func() bool { return u.activity() == "needs-input" }), name+": at the permission prompt the session reports needs-input", u.activity())
	id2, d2 := u.handoff("rally-prompt-marker")
	check(t, d2["queued"] == true && d2["delivery"] == "queued", name+": a handoff while the host waits at its permission prompt is queued", d2)
	time.Sleep(3 * time.Second) // what a wrong Enter would have done by now
	_, made := os.Stat(marker)
	check(t, made != nil, name+": the queued handoff answered nothing: no marker file, the prompt still waits")
	check(t, strings.Contains(u.screen(), prompt), name+": the permission prompt is still on the screen")
	check(t, !r.srv.saw("rally-prompt-marker"), name+": the queued handoff has not reached the model yet")
	deliveries := strings.Count(u.rally("log", "--kind", "delivery", "--json"), `"ref": "`+id2+`"`)
	check(t, deliveries == 0, name+": no delivery fact while it is queued", deliveries)

	// The person answers the prompt (a key the test sends, not rally).
	u.tmux("send-keys", "-t", "=rally-"+u.session+":", "Enter")
	check(t, waitFor(30*time.Second, func() bool { _, err := os.Stat(marker); return err == nil }), name+": the person's answer ran the command")
	check(t, waitFor(60*time.Second, func() bool { return r.srv.saw("rally-prompt-marker") }), name+": after the person answered, the queued handoff reached the model (handed over at the turn's end)")
	check(t, waitFor(60*time.Second, func() bool { return u.receiptBy(id2, u.tool) }), name+": the queued handoff was acknowledged by "+u.tool)
	deliveries = strings.Count(u.rally("log", "--kind", "delivery", "--json"), `"ref": "`+id2+`"`)
	check(t, deliveries == 1, name+": one delivery fact, written when it was handed over", deliveries)
	t.Logf("%s: activity facts: %s", name, strings.Join(u.statuses(), " "))
}

// statuses lists the session's status facts in order.
func (u *tui) statuses() []string {
	var fs []struct{ Kind, Tool, Status string }
	json.Unmarshal([]byte(u.rally("log", "--kind", "status", "--json")), &fs)
	var out []string
	for _, f := range fs {
		if f.Tool == u.tool {
			out = append(out, f.Status)
		}
	}
	return out
}

// claudeReturningUser writes the Claude Code state of a person who has
// used it before in this repository: onboarding done, the API key
// approved, the folder trusted, no nudge dialog; and a permission rule
// that lets the agent acknowledge handoffs without asking.
func claudeReturningUser(r *repo, key string) {
	state := map[string]any{
		"hasCompletedOnboarding": true, "lastOnboardingVersion": "2.1.332", "theme": "dark", "numStartups": 5,
		"customApiKeyResponses":   map[string]any{"approved": []string{key[len(key)-20:]}, "rejected": []string{}},
		"hasSeenAutoDefaultNudge": true, "bypassPermissionsModeAccepted": true,
		"projects": map[string]any{r.dir: map[string]any{"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true,
			"projectOnboardingSeenCount": 1}},
	}
	b, _ := json.Marshal(state)
	os.WriteFile(filepath.Join(r.home, ".claude.json"), b, 0o644)
	os.MkdirAll(filepath.Join(r.home, ".claude"), 0o755)
	os.WriteFile(filepath.Join(r.home, ".claude", "settings.json"),
		[]byte(`{"permissions":{"defaultMode":"default","allow":["Bash(git rally receipt:*)"]}}`), 0o644)
}

func TestDeliveryClaudeTUI(t *testing.T) {
	t.Parallel()
	needTmux(t)
	r := newRepo(t, "claude")
	t.Cleanup(r.dump)
	key := "sk-ant-test-0000000000000000000000"
	claudeReturningUser(r, key)
	bin := filepath.Join(hostsDir, "@anthropic-ai", "claude-code-linux-x64", "claude")
	env := r.env("ANTHROPIC_BASE_URL="+r.srv.url, "ANTHROPIC_API_KEY="+key,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "TERM=xterm-256color")
	env, log := timeHooks(t, env)
	u := launch(t, r, "claude", []string{bin, script()}, env)
	check(t, u.tool == "claude_code:01", "claude: git rally run started the interactive TUI as claude_code:01", u.tool)
	deliveryChecks(t, u, "claude", "Do you want to proceed?")
	hookLatency(t, "claude", log)
}

// geminiReturningUser writes the Gemini CLI settings of a person who has
// used it here: API-key auth, a fixed model (the default "auto" asks a
// routing model first), the repository trusted, the default approval mode
// (a shell command asks "Allow execution of ...?") and the agent allowed
// to acknowledge handoffs without asking, as Gemini itself saves the
// answer "Allow for all future sessions" (~/.gemini/policies/auto-saved.toml,
// a commandPrefix rule). Not through tools.allowed: a narrowed entry there
// ("run_shell_command(git rally receipt)") makes Gemini's policy engine
// deny every other shell command instead of asking.
func geminiReturningUser(r *repo) {
	gdir := filepath.Join(r.home, ".gemini")
	os.MkdirAll(filepath.Join(gdir, "policies"), 0o755)
	trust, _ := json.Marshal(map[string]string{r.dir: "TRUST_FOLDER"})
	os.WriteFile(filepath.Join(gdir, "trustedFolders.json"), trust, 0o644)
	os.WriteFile(filepath.Join(gdir, "settings.json"), []byte(`{"security":{"auth":{"selectedType":"gemini-api-key"}},`+
		`"model":{"name":"gemini-2.5-pro"},"privacy":{"usageStatisticsEnabled":false},`+
		`"general":{"disableAutoUpdate":true,"disableUpdateNag":true},"ide":{"hasSeenNudge":true}}`), 0o644)
	os.WriteFile(filepath.Join(gdir, "policies", "auto-saved.toml"), []byte("[[rule]]\ntoolName = \"run_shell_command\"\n"+
		"decision = \"allow\"\npriority = 950\ncommandPrefix = \"git rally receipt\"\n"), 0o644)
}

func TestDeliveryGeminiTUI(t *testing.T) {
	t.Parallel()
	needTmux(t)
	r := newRepo(t, "gemini")
	t.Cleanup(r.dump)
	geminiReturningUser(r)
	bin := filepath.Join(hostsDir, ".bin", "gemini")
	env := r.env("GEMINI_API_KEY=test-key", "GOOGLE_GEMINI_BASE_URL="+r.srv.url, "GEMINI_CLI_NO_RELAUNCH=true", "TERM=xterm-256color")
	env, log := timeHooks(t, env)
	u := launch(t, r, "gemini", []string{bin, "--model", "gemini-2.5-pro", "--prompt-interactive", script()}, env)
	check(t, u.tool == "gemini:01", "gemini: git rally run started the interactive TUI as gemini:01", u.tool)
	deliveryChecks(t, u, "gemini", "Allow execution of")
	hookLatency(t, "gemini", log)
}

// codexReturningUser is codexHome with what an interactive Codex asks a
// new user first answered, approval asked for commands (untrusted), a rule
// that lets the agent acknowledge handoffs without asking, and rally's
// hooks (in the main checkout, where Codex reads a linked worktree's)
// approved as /hooks does.
func codexReturningUser(t *testing.T, r *repo, env []string) (bin, chome string) {
	bin, chome = codexHome(r)
	cfgPath := filepath.Join(chome, "config.toml")
	cfg, _ := os.ReadFile(cfgPath)
	text := strings.Replace(string(cfg), `model = "gpt-5.5"`, `model = "rally-scripted"`, 1)
	text = strings.Replace(text, `approval_policy = "never"`, `approval_policy = "on-request"`, 1)
	text = strings.Replace(text, `sandbox_mode = "danger-full-access"`, `sandbox_mode = "workspace-write"`, 1)
	text += "\n[tui]\nshow_tooltips = false\n\n[notice]\nhide_full_access_warning = true\nhide_rate_limit_model_nudge = true\n"
	os.WriteFile(cfgPath, []byte(text), 0o644)
	os.MkdirAll(filepath.Join(chome, "rules"), 0o755)
	os.WriteFile(filepath.Join(chome, "rules", "default.rules"),
		[]byte(`prefix_rule(pattern=["git", "rally", "receipt"], decision="allow")`+"\n"), 0o644)
	approveCodexHooks(t, r, bin, env, cfgPath)
	return bin, chome
}

func TestDeliveryCodexTUI(t *testing.T) {
	t.Parallel()
	needTmux(t)
	r := newRepo(t, "codex")
	t.Cleanup(r.dump)
	chome := filepath.Join(r.home, ".codex")
	env := r.env("CODEX_HOME="+chome, "MOCK_API_KEY=test-key", "TERM=xterm-256color")
	bin, _ := codexReturningUser(t, r, env)
	env, log := timeHooks(t, env)
	u := launch(t, r, "codex", []string{bin, "--no-daemon", script()}, env)
	check(t, u.tool == "codex:01", "codex: git rally run started the interactive TUI as codex:01", u.tool)
	deliveryChecks(t, u, "codex", "Would you like to run")
	hookLatency(t, "codex", log)
}
