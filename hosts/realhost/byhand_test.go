package realhost

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestByHand is not a check: it sets up what a person needs to try the
// real hosts by hand, offline, and serves the scripted model until the
// file it names is removed (at most an hour). It runs only with
// RALLY_REALHOST_BYHAND=<dir>, inside a network namespace of the person's
// (the test binary run with RALLY_REALHOST_INNER=1, RALLY_REALHOST_HOSTS
// and RALLY_REALHOST_BIN, under `ip netns exec` or `unshare -n`). In <dir>
// it makes a repository (repo/), a HOME with Claude Code, Codex and Gemini
// CLI configured as a returning user has them (home/; rally's Codex hooks
// not approved: `run codex` does that), a bin/ with the three hosts and
// git-rally, env (the variables to export) and serving (removed to stop).
// What the model does is the script in each prompt (RALLYSCRIPT:...:END).
func TestByHand(t *testing.T) {
	dir := os.Getenv("RALLY_REALHOST_BYHAND")
	if dir == "" {
		t.Skip("RALLY_REALHOST_BYHAND=<dir> sets up a walk-through by hand")
	}
	r := &repo{t: t, dir: filepath.Join(dir, "repo"), home: filepath.Join(dir, "home"), srv: startServer(t)}
	bin := filepath.Join(dir, "bin")
	for _, d := range []string{r.dir, r.home, bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range map[string]string{
		"claude": filepath.Join(hostsDir, "@anthropic-ai", "claude-code-linux-x64", "claude"),
		"codex":  filepath.Join(hostsDir, ".bin", "codex"), "gemini": filepath.Join(hostsDir, ".bin", "gemini"),
		"git-rally": filepath.Join(binDir, "git-rally"),
	} {
		os.Remove(filepath.Join(bin, name))
		if err := os.Symlink(target, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	r.write("README.md", "scratch repository\n")
	r.write("src/app.txt", "app\n")
	r.git("init", "-q")
	r.git("add", ".")
	r.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
	key := "sk-ant-test-0000000000000000000000"
	claudeReturningUser(r, key)
	geminiReturningUser(r)
	_, chome := codexHome(r)
	cfg, _ := os.ReadFile(filepath.Join(chome, "config.toml"))
	text := strings.Replace(string(cfg), `model = "gpt-5.5"`, `model = "rally-scripted"`, 1)
	text = strings.Replace(text, `approval_policy = "never"`, `approval_policy = "on-request"`, 1)
	text = strings.Replace(text, `sandbox_mode = "danger-full-access"`, `sandbox_mode = "workspace-write"`, 1)
	text += "\n[tui]\nshow_tooltips = false\n\n[notice]\nhide_full_access_warning = true\nhide_rate_limit_model_nudge = true\n"
	os.WriteFile(filepath.Join(chome, "config.toml"), []byte(text), 0o644)
	os.MkdirAll(filepath.Join(chome, "rules"), 0o755)
	os.WriteFile(filepath.Join(chome, "rules", "default.rules"),
		[]byte(`prefix_rule(pattern=["git", "rally", "receipt"], decision="allow")`+"\n"), 0o644)
	env := fmt.Sprintf("export HOME=%q PATH=%q TERM=xterm-256color LANG=C.UTF-8\n", r.home, bin+":"+os.Getenv("PATH")) +
		fmt.Sprintf("export ANTHROPIC_BASE_URL=%q ANTHROPIC_API_KEY=%q CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1\n", r.srv.url, key) +
		fmt.Sprintf("export CODEX_HOME=%q MOCK_API_KEY=test-key\n", chome) +
		fmt.Sprintf("export GEMINI_API_KEY=test-key GOOGLE_GEMINI_BASE_URL=%q GEMINI_CLI_NO_RELAUNCH=true\n", r.srv.url) +
		"export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t\n"
	if err := os.WriteFile(filepath.Join(dir, "env"), []byte(env), 0o644); err != nil {
		t.Fatal(err)
	}
	serving := filepath.Join(dir, "serving")
	os.WriteFile(serving, []byte(r.srv.url+"\n"), 0o644)
	t.Logf("serving the scripted model at %s; source %s; rm %s to stop", r.srv.url, filepath.Join(dir, "env"), serving)
	for end := time.Now().Add(time.Hour); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		if _, err := os.Stat(serving); err != nil {
			break
		}
	}
	r.dump()
}
