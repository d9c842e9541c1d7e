package session

import (
	"os"
	"testing"
)

// TestMain lets the test binary be a pane's keeper (Tmux.Keeper), as
// git-rally is: `session.test __rally-pane -- argv`.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == KeeperArg && os.Args[2] == "--" {
		os.Exit(Keep(os.Args[3:]))
	}
	os.Exit(m.Run())
}
