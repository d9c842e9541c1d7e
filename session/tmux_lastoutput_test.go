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

// TestExitedKeepsLastOutput starts 40 sessions at once whose program
// prints two lines and exits at once, as a host refusing its arguments
// does, and counts those whose kept pane lost the lines: none may. Without
// the keeper about one in seven lost them on a loaded machine, one in fifty
// with the pipe alone (BenchmarkLostLastOutput).
func TestExitedKeepsLastOutput(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux is not installed (.ci/run installs it)")
		}
		t.Skip("tmux is not installed")
	}
	t.Setenv("TMUX_TMPDIR", shortTemp(t))
	t.Setenv("TMUX", "")
	tm := &Tmux{Keeper: os.Args[0]} // this test binary keeps the panes (TestMain)
	if _, err := tm.run(nil, "new-session", "-d", "-s", "keep", "sleep", "600"); err != nil {
		t.Fatal(err)
	}
	if lost := loseOutput(t, tm, 40); lost > 0 {
		t.Errorf("%d of 40 panes whose program printed and exited at once lost their output", lost)
	}
}

// loseOutput starts n sessions whose program prints and exits at once and
// returns how many of their kept panes lost the last line.
func loseOutput(t testing.TB, tm *Tmux, n int) int {
	dir := t.TempDir()
	for j := 0; j < n; j++ {
		argv := []string{"sh", "-c", fmt.Sprintf("echo starting; echo 'error %d' >&2; exit 2", j)}
		if err := tm.Start(fmt.Sprintf("d%d", j), dir, []string{"PATH=" + os.Getenv("PATH")}, argv); err != nil {
			t.Fatal(err)
		}
	}
	lost := 0
	for j := 0; j < n; j++ {
		target := fmt.Sprintf("d%d", j)
		var end Ending
		ok := false
		for tries := 0; !ok && tries < 400; tries++ {
			if end, ok, _ = tm.Ended(target); !ok {
				time.Sleep(50 * time.Millisecond)
			}
		}
		if !ok || end.Status != 2 || end.LastLine != fmt.Sprintf("error %d", j) {
			lost++
			t.Logf("%s: ended %v, exit status %d, last line %q", target, ok, end.Status, end.LastLine)
		}
		tm.run(nil, "kill-session", "-t", tgt(target))
	}
	return lost
}

// BenchmarkLostLastOutput counts the exits that lose their output: 40
// sessions a round whose program prints two lines and exits at once,
// started as Start does with a keeper (kept), with the pipe alone
// (piped), and as rally did before either (unpiped), in one run so the
// three see the same machine. It reports lost/exit:
//
//	go test -run '^$' -bench LostLastOutput -benchtime 5x ./session
func BenchmarkLostLastOutput(b *testing.B) {
	if _, err := exec.LookPath("tmux"); err != nil {
		b.Skip("tmux is not installed")
	}
	for _, variant := range []string{"unpiped", "piped", "kept"} {
		b.Run(variant, func(b *testing.B) {
			dir, err := os.MkdirTemp("", "rt")
			if err != nil {
				b.Fatal(err)
			}
			defer os.RemoveAll(dir)
			b.Setenv("TMUX_TMPDIR", dir)
			b.Setenv("TMUX", "")
			tm := &Tmux{}
			if variant == "kept" {
				tm.Keeper = os.Args[0]
			}
			defer tm.run(nil, "kill-server") // this benchmark's private server
			if _, err := tm.run(nil, "new-session", "-d", "-s", "keep", "sleep", "600"); err != nil {
				b.Fatal(err)
			}
			lost, total := 0, 0
			for i := 0; i < b.N; i++ {
				if variant == "unpiped" {
					lost += loseOutputUnpiped(b, tm, 40, i)
				} else {
					lost += loseOutput(b, tm, 40)
				}
				total += 40
			}
			b.ReportMetric(float64(lost)/float64(total), "lost/exit")
		})
	}
}

// loseOutputUnpiped is loseOutput with the panes started as rally did
// before the pipe and the keeper: new-session and remain-on-exit only.
func loseOutputUnpiped(b *testing.B, tm *Tmux, n, round int) int {
	lost := 0
	for j := 0; j < n; j++ {
		name := fmt.Sprintf("u%d-%d", round, j)
		argv := []string{"sh", "-c", fmt.Sprintf("echo starting; echo 'error %d' >&2; exit 2", j)}
		if _, err := tm.run(nil, append(append([]string{"new-session", "-d", "-s", name, "-x", "200", "-y", "50", "--"}, argv...),
			";", "set-option", "-w", "-t", tgt(name), "remain-on-exit", "on")...); err != nil {
			b.Fatal(err)
		}
	}
	for j := 0; j < n; j++ {
		target := fmt.Sprintf("u%d-%d", round, j)
		var end Ending
		ok := false
		for tries := 0; !ok && tries < 400; tries++ {
			if end, ok, _ = tm.Ended(target); !ok {
				time.Sleep(50 * time.Millisecond)
			}
		}
		if !ok || end.LastLine != fmt.Sprintf("error %d", j) {
			lost++
		}
		tm.run(nil, "kill-session", "-t", tgt(target))
	}
	return lost
}

// TestKeptPaneShowsItsProgram: with the keeper in front, the pane's
// foreground program is still the session's own (a shell stays a shell
// to DeliveryPlan, which never types into one), and its exit status is
// the program's.
func TestKeptPaneShowsItsProgram(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux is not installed (.ci/run installs it)")
		}
		t.Skip("tmux is not installed")
	}
	t.Setenv("TMUX_TMPDIR", shortTemp(t))
	t.Setenv("TMUX", "")
	tm := &Tmux{Keeper: os.Args[0]}
	dir := t.TempDir()
	// not interactive: it takes no terminal of its own (no job control)
	if err := tm.Start("shell", dir, []string{"PATH=" + os.Getenv("PATH")}, []string{"sh", "-c", "read line; exit 7"}); err != nil {
		t.Fatal(err)
	}
	var prog string
	for i := 0; i < 200 && prog != "sh"; i++ {
		if p, err := tm.Foreground("shell"); err == nil {
			prog = p
		}
		time.Sleep(25 * time.Millisecond)
	}
	if prog != "sh" {
		t.Fatalf("foreground of a kept sh: %q, want sh", prog)
	}
	if err := tm.Paste("shell", "go"); err != nil {
		t.Fatal(err)
	}
	var end Ending
	ok := false
	for i := 0; i < 400 && !ok; i++ {
		if end, ok, _ = tm.Ended("shell"); !ok {
			time.Sleep(25 * time.Millisecond)
		}
	}
	if !ok || end.Status != 7 {
		t.Fatalf("a kept sh that exited 7: ended %v, status %d", ok, end.Status)
	}
}
