package cli

import (
	"bytes"
	"strings"
	"testing"
)

// A pager that quits before reading (q in less before the output ends)
// is not an error: the output is dropped and log exits 0. The pager here
// exits at once and the log is longer than a pipe holds, so log's writes
// meet a closed pipe every time (before: "write |1: broken pipe", exit 1,
// and cli_color_pager failed when its pager won the race).
func TestPagerQuitEarly(t *testing.T) {
	logLedger(t, 2000)
	t.Setenv("RALLY_FORCE_TTY", "1")
	t.Setenv("GIT_PAGER", "exit 0")
	var out, errb bytes.Buffer
	if code := Run([]string{"log"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("log through a pager that quit: exit %d: %s", code, errb.String())
	}
	if errb.Len() != 0 {
		t.Errorf("stderr: %s", errb.String())
	}
	// A write error that is not the pager's going still fails.
	if _, err := (&pagerPipe{w: failWriter{}}).Write([]byte("x")); err == nil {
		t.Error("a failing write through the pager pipe reported no error")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, bytes.ErrTooLarge }
