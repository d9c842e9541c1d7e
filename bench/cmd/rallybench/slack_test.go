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
