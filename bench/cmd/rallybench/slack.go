package main

import (
	"fmt"
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
