package session

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
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

// BenchmarkLostLastOutput counts the exits that lose their output: 40
// sessions a round whose program prints two lines and exits at once,
// started as Start does (piped) and as it did before the pipe (unpiped),
// in one run so the two see the same machine. It reports lost/exit; a
// count, not a test, because the rest (a kernel race) depends on load:
//
//	go test -run '^$' -bench LostLastOutput -benchtime 3x ./session
func BenchmarkLostLastOutput(b *testing.B) {
	if _, err := exec.LookPath("tmux"); err != nil {
		b.Skip("tmux is not installed")
	}
	for _, piped := range []bool{false, true} {
		name := "unpiped"
		if piped {
			name = "piped"
		}
		b.Run(name, func(b *testing.B) {
			dir, err := os.MkdirTemp("", "rt")
			if err != nil {
				b.Fatal(err)
			}
			defer os.RemoveAll(dir)
			b.Setenv("TMUX_TMPDIR", dir)
			b.Setenv("TMUX", "")
			tm := &Tmux{}
			defer tm.run(nil, "kill-server") // this benchmark's private server
			if _, err := tm.run(nil, "new-session", "-d", "-s", "keep", "sleep", "600"); err != nil {
				b.Fatal(err)
			}
			lost, total := 0, 0
			for i := 0; i < b.N; i++ {
				for j := 0; j < 40; j++ {
					name := fmt.Sprintf("d%d-%d", i, j)
					argv := []string{"sh", "-c", fmt.Sprintf("echo starting; echo 'error %d' >&2; exit 2", j)}
					if piped {
						err = tm.Start(name, dir, []string{"PATH=" + os.Getenv("PATH")}, argv)
					} else {
						_, err = tm.run(nil, append(append([]string{"new-session", "-d", "-s", name, "-c", dir, "-x", "200", "-y", "50", "--"}, argv...),
							";", "set-option", "-w", "-t", tgt(name), "remain-on-exit", "on")...)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				for j := 0; j < 40; j++ {
					target := fmt.Sprintf("d%d-%d", i, j)
					var end Ending
					ok := false
					for tries := 0; !ok && tries < 400; tries++ {
						if end, ok, _ = tm.Ended(target); !ok {
							time.Sleep(50 * time.Millisecond)
						}
					}
					total++
					if !ok || end.LastLine != fmt.Sprintf("error %d", j) {
						lost++
					}
					tm.run(nil, "kill-session", "-t", tgt(target))
				}
			}
			b.ReportMetric(float64(lost)/float64(total), "lost/exit")
		})
	}
}
