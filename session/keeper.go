package session

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// KeeperArg is the first argument of `git-rally <KeeperArg> -- <argv>`,
// the program a pane rally starts runs (Tmux.Keeper): it runs argv and
// outlives it until tmux has read all it wrote (Keep).
const KeeperArg = "__rally-pane"

// Keep runs argv in the foreground of the terminal it was given (its own
// process group, so tmux's #{pane_current_command} and the terminal's
// signals are the host's) and waits for it. Then it writes a mark, an
// invisible title change, and waits until tmux shows that title: tmux reads
// a terminal's output in order, so by then it has read everything argv
// wrote. Only then does the pane's program (this one) exit, with argv's
// status. Without it, tmux could see the pane's program exit before it
// had read its last output and close the terminal with that output unread
// (tmux before 3.7 does not look; 3.7 and a piped pane look, but Linux
// may not have handed the output to the terminal's reader yet).
func Keep(argv []string) int {
	if len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "git-rally: error: nothing to run")
		return 2
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Foreground: true, Ctty: 0}
	// Caught, not ignored: an ignored signal would stay ignored in argv.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGTTOU, syscall.SIGTTIN)
	if err := cmd.Start(); err != nil {
		// Never run it outside the terminal's foreground: the pane would
		// then show this program, not argv, to the check that keeps
		// deliveries out of shells (DeliveryPlan).
		fmt.Fprintf(os.Stderr, "git-rally: error: cannot run %s in the foreground of its terminal: %v\n", argv[0], err)
		return 126
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				// stop and a closed terminal end the host, as they
				// would end it were it the pane's program
				if s == syscall.SIGTERM || s == syscall.SIGHUP {
					syscall.Kill(-cmd.Process.Pid, s.(syscall.Signal))
				}
			case <-done:
				return
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	status, sig := 0, syscall.Signal(0)
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
		switch {
		case ws.Signaled():
			sig = ws.Signal()
			status = 128 + int(sig)
		default:
			status = ws.ExitStatus()
		}
	} else if err != nil {
		status = 1
	}
	markRead()
	if sig != 0 {
		// end as argv ended, so tmux reports its signal
		signal.Reset(sig)
		syscall.Kill(os.Getpid(), sig)
		time.Sleep(100 * time.Millisecond)
	}
	return status
}

// markRead writes an invisible mark (a window title of its own) and waits,
// at most two seconds, until tmux shows it as the pane's title.
func markRead() {
	pane := os.Getenv("TMUX_PANE")
	if pane == "" || os.Getenv("TMUX") == "" {
		return
	}
	var b [8]byte
	rand.Read(b[:])
	mark := "rally-ended-" + hex.EncodeToString(b[:])
	fmt.Fprintf(os.Stdout, "\x1b]2;%s\x1b\\", mark)
	t := &Tmux{}
	for i := 0; i < 100; i++ {
		out, err := t.run(nil, "display-message", "-p", "-t", pane, "#{pane_title}")
		if err != nil || strings.TrimSpace(out) == mark {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
