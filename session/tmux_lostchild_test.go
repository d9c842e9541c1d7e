package session

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestEndedCollectsAStatusTmuxLost makes the race behind the
// session_lifecycle flake happen every time: gdb holds the tmux server
// inside libutempter's helper call (SIGCHLD at SIG_DFL), which tmux makes
// when it reads end-of-file from a pane, until the pane's program has
// exited, so its SIGCHLD is discarded. The pane is then dead, with no exit
// status and its program a zombie; Ended must still report status 3.
// It needs gdb (CI installs it), ptrace and a tmux linked with
// libutempter (Debian's); it skips without ptrace or libutempter.
func TestEndedCollectsAStatusTmuxLost(t *testing.T) {
	for _, p := range []string{"tmux", "gdb"} {
		if _, err := exec.LookPath(p); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not installed (.ci/run installs it)", p)
			}
			t.Skipf("%s is not installed", p)
		}
	}
	t.Setenv("TMUX_TMPDIR", shortTemp(t))
	t.Setenv("TMUX", "")
	tm := &Tmux{}
	if _, err := tm.run(nil, "new-session", "-d", "-s", "keep", "sleep", "600"); err != nil {
		t.Fatal(err)
	}
	out, err := tm.run(nil, "display-message", "-p", "-t", "=keep:", "#{pid}")
	if err != nil {
		t.Fatal(err)
	}
	server := strings.TrimSpace(out)
	if maps, _ := os.ReadFile("/proc/" + server + "/maps"); !strings.Contains(string(maps), "libutempter") {
		t.Skip("this tmux is not linked with libutempter, so the race cannot happen")
	}
	dir := t.TempDir()
	goFile, pidFile := filepath.Join(dir, "go"), filepath.Join(dir, "pid")
	// Once stopped at fork in utempter's helper call, gdb lets the
	// pane's program end and waits until it is a zombie.
	hold := fmt.Sprintf(`shell touch %s; while ! grep -qs '^State:.Z' /proc/$(cat %s)/status; do sleep 0.05; done`, goFile, pidFile)
	gdb := exec.Command("gdb", "-p", server, "-batch", "-nx",
		"-ex", "handle SIGCHLD nostop noprint pass",
		"-ex", "break utempter_remove_record", "-ex", "shell touch "+filepath.Join(dir, "attached"),
		"-ex", "continue", "-ex", "break fork", "-ex", "continue",
		"-ex", hold, "-ex", "delete", "-ex", "detach")
	gdbOut, err := os.Create(filepath.Join(dir, "gdb.out"))
	if err != nil {
		t.Fatal(err)
	}
	defer gdbOut.Close()
	gdb.Stdout, gdb.Stderr = gdbOut, gdbOut
	said := func() string { b, _ := os.ReadFile(gdbOut.Name()); return string(b) }
	if err := gdb.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- gdb.Wait() }()
	t.Cleanup(func() { gdb.Process.Kill() })
	for i := 0; ; i++ {
		if _, err := os.Stat(filepath.Join(dir, "attached")); err == nil {
			break
		}
		select {
		case <-done:
			t.Skipf("gdb did not attach to the tmux server (ptrace refused?):\n%s", said())
		case <-time.After(50 * time.Millisecond):
		}
		if i == 600 {
			t.Skipf("gdb did not attach to the tmux server in 30s:\n%s", said())
		}
	}
	// The program closes the pane's terminal when told (tmux reads
	// end-of-file and calls utempter), then waits for gdb's word to end.
	closeFile := filepath.Join(dir, "close")
	prog := fmt.Sprintf(`echo $$ > %s; while [ ! -e %s ]; do sleep 0.05; done; exec </dev/null >/dev/null 2>&1; while [ ! -e %s ]; do sleep 0.05; done; exit 3`,
		pidFile, closeFile, goFile)
	if err := tm.Start("rally-lost-01", dir, os.Environ(), []string{"sh", "-c", prog}); err != nil {
		t.Fatal(err)
	}
	// tmux sends itself SIGCHLD after utempter_add_record; a round trip
	// lets its loop handle that first, or it would reap the zombie.
	if _, err := tm.run(nil, "display-message", "-p", "x"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(closeFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("gdb did not finish:\n%s", said())
	}
	if !strings.Contains(said(), "Breakpoint 2,") {
		t.Fatalf("gdb never held the server in utempter's helper call:\n%s", said())
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if !strings.Contains(string(st), "State:\tZ") {
		t.Fatalf("the race did not happen: the program is not a zombie the server left:\n%s\ngdb:\n%s", st, said())
	}
	e, ok, err := tm.Ended("rally-lost-01")
	if err != nil || !ok || e.Status != 3 {
		t.Fatalf("Ended = %+v, %v, %v; want status 3", e, ok, err)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
		t.Errorf("the program %d is still not reaped", pid)
	}
}
