package cli

import (
	"bytes"
	"strings"
	"testing"
)

// Without git-rally-server beside the binary or on PATH, its commands say
// how to install it (exit 2), and write nothing.
func TestServerCommandsWithoutTheServer(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for _, args := range [][]string{{"serve"}, {"mcp"}, {"demo", "--serve"}} {
		var out, errb bytes.Buffer
		code := Run(args, strings.NewReader(""), &out, &errb)
		if code != ExitUsage || out.Len() != 0 ||
			!strings.Contains(errb.String(), "git-rally: error: git-rally-server is not installed") ||
			!strings.Contains(errb.String(), "git-rally: hint: go install github.com/git-rally/git-rally/cmd/...") {
			t.Errorf("%v: exit %d\nstdout: %s\nstderr: %s", args, code, out.String(), errb.String())
		}
	}
}
