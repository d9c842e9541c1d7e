package session

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestStartPipesThePane: a pane Start makes has a pipe from the start,
// so tmux (before 3.7) reads what the program wrote before it closes the
// terminal of a program that exited at once (see Start). Measured with
// 40 sessions whose program prints two lines and exits at once: without
// the pipe 4 to 8 of them lost both lines, with it 0 to 2 (a kernel race
// tmux cannot see; session/tmux.go).
func TestStartPipesThePane(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux is not installed (.ci/run installs it)")
		}
		t.Skip("tmux is not installed")
	}
	t.Setenv("TMUX_TMPDIR", shortTemp(t))
	t.Setenv("TMUX", "")
	tm := &Tmux{}
	if err := tm.Start("waits", t.TempDir(), []string{"PATH=" + os.Getenv("PATH")}, []string{"sleep", "600"}); err != nil {
		t.Fatal(err)
	}
	out, err := tm.run(nil, "display-message", "-p", "-t", "=waits:", "#{pane_pipe} #{remain-on-exit}")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(out); got != "1 on" {
		t.Fatalf("pane_pipe and remain-on-exit of a started pane: %q, want \"1 on\"", got)
	}
}
