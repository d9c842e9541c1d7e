package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/git-rally/git-rally/ledger"
)

// doctor says when the history was too long to check clocks along from its
// root and how many of its last commits it checked (before, it checked
// none past 5,000 commits and said nothing).
func TestDoctorSaysItsClockWindow(t *testing.T) {
	logLedger(t, 2000) // 5 commits
	doctor := func(args ...string) (string, int) {
		var out, errb bytes.Buffer
		code := Run(append([]string{"doctor"}, args...), strings.NewReader(""), &out, &errb)
		return out.String() + errb.String(), code
	}
	out, code := doctor("--json")
	var whole map[string]any
	if err := json.Unmarshal([]byte(out), &whole); err != nil || code != 0 {
		t.Fatalf("doctor --json: exit %d, %v: %s", code, err, out)
	}
	if _, ok := whole["clock_window"]; ok {
		t.Fatalf("a 5-commit history checked whole reports a clock window: %s", out)
	}
	defer func(m, k int) { doctorMaxCommits, ledger.ClockTail = m, k }(doctorMaxCommits, ledger.ClockTail)
	doctorMaxCommits, ledger.ClockTail = 3, 2
	out, code = doctor("--json")
	var part struct {
		OK          bool `json:"ok"`
		ClockWindow int  `json:"clock_window"`
	}
	if err := json.Unmarshal([]byte(out), &part); err != nil || code != 0 || !part.OK || part.ClockWindow != 2 {
		t.Fatalf("doctor --json past the window: exit %d, %v, %+v: %s", code, err, part, out)
	}
	out, code = doctor()
	if code != 0 || !strings.Contains(out, "note: clocks checked over the last 2 commits (the history is longer than 3)") {
		t.Fatalf("doctor past the window: exit %d: %s", code, out)
	}
}
