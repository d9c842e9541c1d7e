package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"time"
)

// prctl(2) options (linux/prctl.h).
const (
	prSetTimerSlack = 29
	prGetTimerSlack = 30
)

// withTimerSlack runs f with this goroutine locked to its thread and the
// thread's timer slack set to slack, then sets it back. A process started
// from f (os/exec forks from the calling thread) inherits the slack, keeps
// it across execve, and hands it to every thread it creates: in a Go
// process, to sysmon, whose first fifty sleeps of 20 µs then merge into
// far fewer wake-ups (bench/README.md, "sysmon").
func withTimerSlack(slack time.Duration, f func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	old, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prGetTimerSlack, 0, 0)
	if errno != 0 {
		return fmt.Errorf("prctl(PR_GET_TIMERSLACK): %w", errno)
	}
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, uintptr(slack.Nanoseconds()), 0); errno != 0 {
		return fmt.Errorf("prctl(PR_SET_TIMERSLACK, %d): %w", slack.Nanoseconds(), errno)
	}
	defer syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, old, 0)
	return f()
}

// runSlack is "rallybench slack DURATION COMMAND [ARG...]": it sets its
// timer slack to DURATION and executes COMMAND in its place, so that the
// command and every thread it makes run with that slack (bench/README.md,
// "sysmon": `perf stat` and `rallybench rusage` of a claim at two slacks).
func runSlack(args []string) error {
	if len(args) < 2 {
		return fmt.Errorf("usage: rallybench slack DURATION COMMAND [ARG...]")
	}
	slack, err := time.ParseDuration(args[0])
	if err != nil || slack <= 0 {
		return fmt.Errorf("slack: want a duration above 0, got %q", args[0])
	}
	path, err := exec.LookPath(args[1])
	if err != nil {
		return err
	}
	// The thread that executes is the one whose slack was set: execve
	// keeps it, and the other threads end.
	return withTimerSlack(slack, func() error {
		return syscall.Exec(path, args[1:], os.Environ())
	})
}
