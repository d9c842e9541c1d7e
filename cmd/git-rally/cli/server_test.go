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

// hooks install --mcp registers `git-rally mcp`, which needs
// git-rally-server: without it, install warns.
func TestHooksInstallMCPWarnsWithoutTheServer(t *testing.T) {
	sessionEnv(t)
	chdirNewRepo(t)
	t.Setenv("PATH", t.TempDir()+":/usr/bin:/bin")
	var out, errb bytes.Buffer
	if code := Run([]string{"hooks", "install", "--claude", "--mcp"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "git-rally: warning: git-rally-server is not installed") {
		t.Errorf("no warning: %s", errb.String())
	}
}
