package testscripts

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// setupTmux gives every script a private tmux server: TMUX_TMPDIR in a
// short temporary directory (a socket path must stay under ~100 bytes)
// and no $TMUX, so a script never reaches the tmux of whoever runs the
// tests. At the end it kills exactly the sessions on that private server,
// which are the ones the script made.
func setupTmux(env *testscript.Env) error {
	dir, err := os.MkdirTemp("", "rt")
	if err != nil {
		return err
	}
	env.Setenv("TMUX_TMPDIR", dir)
	env.Setenv("TMUX", "")
	env.Defer(func() {
		killPrivateSessions(dir)
		os.RemoveAll(dir)
	})
	return nil
}

func privateTmux(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("tmux", args...)
	cmd.Env = append(os.Environ(), "TMUX_TMPDIR="+dir, "TMUX=")
	return cmd
}

func killPrivateSessions(dir string) {
	if _, err := exec.LookPath("tmux"); err != nil {
		return
	}
	out, err := privateTmux(dir, "list-sessions", "-F", "#{session_name}").Output()
	if err != nil {
		return
	}
	for _, name := range strings.Fields(string(out)) {
		privateTmux(dir, "kill-session", "-t", "="+name).Run()
	}
}

// tmuxCondition answers [tmux]: tmux is installed. In CI (CI=true) a
// missing tmux fails the script instead of skipping it: .ci/run installs
// it.
func tmuxCondition() (bool, error) {
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") == "true" {
			return false, fmt.Errorf("tmux is not installed, and CI must run the session tests (.ci/run installs it)")
		}
		return false, nil
	}
	return true, nil
}

// cmdWaitFor waits (up to 20 s) until a file in the work dir, or the
// terminal of a tmux session when the argument is tmux:<session>,
// contains the text:
//
//	waitfor tmux:rally-claude-01 'fake agent ready'
func cmdWaitFor(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: waitfor <file|tmux:session> <text>")
	}
	deadline := time.Now().Add(20 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		if name, ok := strings.CutPrefix(args[0], "tmux:"); ok {
			out, _ := privateTmux(ts.Getenv("TMUX_TMPDIR"), "capture-pane", "-p", "-J", "-t", "="+name+":", "-S", "-200").Output()
			last = string(out)
		} else {
			b, _ := os.ReadFile(filepath.Join(ts.Getenv("WORK"), args[0]))
			last = string(b)
		}
		if strings.Contains(last, args[1]) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	ts.Fatalf("waitfor: %q not in %s after 20s; it has:\n%s", args[1], args[0], last)
}

// cmdWaitCmd runs a command again and again (up to 20 s) until its
// stdout matches a regular expression, to wait for a state a rally
// command reports rather than for text on a terminal:
//
//	waitcmd '"exit_status": ?3' git rally sessions --json
func cmdWaitCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: waitcmd <regexp> <program> [args...]")
	}
	re, err := regexp.Compile(args[0])
	ts.Check(err)
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := ts.Exec(args[1], args[2:]...)
		if err == nil && re.MatchString(ts.ReadFile("stdout")) {
			return
		}
		if !time.Now().Before(deadline) {
			ts.Fatalf("waitcmd: %q not in the stdout of %s after 20s (err %v); it has:\n%s", args[0], strings.Join(args[1:], " "), err, ts.ReadFile("stdout"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// cmdReadEnv sets an environment variable to a file's trimmed content
// (a fact id a command printed, saved with `cp stdout id`):
//
//	readenv ID id
func cmdReadEnv(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: readenv <VAR> <file>")
	}
	ts.Setenv(args[0], strings.TrimSpace(ts.ReadFile(args[1])))
}
