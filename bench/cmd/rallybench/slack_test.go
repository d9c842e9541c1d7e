package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestTimerSlackReachesTheChild: a process started inside withTimerSlack
// runs with that slack (it reads its own from /proc), one started after
// it does not.
func TestTimerSlackReachesTheChild(t *testing.T) {
	if _, err := os.Stat("/proc/self/timerslack_ns"); err != nil {
		t.Skipf("no timerslack_ns here (Linux 4.6 and later): %v", err)
	}
	child := func() string {
		out, err := exec.Command("cat", "/proc/self/timerslack_ns").Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	var inside string
	if err := withTimerSlack(3*time.Millisecond+7, func() error { inside = child(); return nil }); err != nil {
		t.Fatal(err)
	}
	if inside != "3000007" {
		t.Errorf("a child started under a slack of 3000007 ns runs with %s", inside)
	}
	if after := child(); after == "3000007" {
		t.Errorf("a child started after withTimerSlack still has its slack (%s)", after)
	}
}

// TestSlackCommand: rallybench slack executes its command with the slack
// asked for (the test binary runs runSlack when RALLYBENCH_SLACK is set),
// and refuses a slack that is not a positive duration.
func TestSlackCommand(t *testing.T) {
	if _, err := os.Stat("/proc/self/timerslack_ns"); err != nil {
		t.Skipf("no timerslack_ns here (Linux 4.6 and later): %v", err)
	}
	if os.Getenv("RALLYBENCH_SLACK") != "" {
		err := runSlack([]string{os.Getenv("RALLYBENCH_SLACK"), "cat", "/proc/self/timerslack_ns"})
		t.Fatalf("runSlack returned: %v", err) // it executes cat on success
	}
	run := func(slack string) (string, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSlackCommand$")
		cmd.Env = append(os.Environ(), "RALLYBENCH_SLACK="+slack)
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err
	}
	out, err := run("2ms")
	if err != nil || out != "2000000" {
		t.Errorf("rallybench slack 2ms cat /proc/self/timerslack_ns: %q, %v; want 2000000", out, err)
	}
	for _, bad := range []string{"0", "-1ms", "soon"} {
		if out, err := run(bad); err == nil || strings.Contains(out, "000") {
			t.Errorf("rallybench slack %s: %q, %v; want an error and no command run", bad, out, err)
		}
	}
}
