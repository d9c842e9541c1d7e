package testscripts

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// A hot command runs before the servers' packages initialise (cli/hot.go,
// cli.Servers): GODEBUG=inittrace=1 lists every package initialised, and
// net/http, html/template and the MCP SDK are not among them for a claim
// or a hook, while the full tree (mcp --help) has them; a hook runs before
// cobra and x/crypto/ssh too (cli/early).
func TestHotCommandsSkipServerInit(t *testing.T) {
	prefix := installedBinary(t)
	env := append(userEnv(t, prefix), "GODEBUG=inittrace=1", "RALLY_TOOL=codex:a1")
	dir := t.TempDir()
	run := func(args ...string) string {
		c := exec.Command(args[0], args[1:]...)
		c.Dir, c.Env = dir, env
		out, _ := c.CombinedOutput()
		return string(out)
	}
	run("git", "init", "-q")
	run("git-rally", "init")
	inits := regexp.MustCompile(`(?m)^init (\S+) @`)
	initialised := func(out string) map[string]bool {
		m := map[string]bool{}
		for _, s := range inits.FindAllStringSubmatch(out, -1) {
			m[s[1]] = true
		}
		return m
	}
	servers := []string{"net/http", "html/template", "github.com/modelcontextprotocol/go-sdk/mcp"}
	full := initialised(run("git-rally", "mcp", "--help"))
	for _, p := range servers {
		if !full[p] {
			t.Fatalf("mcp --help did not initialise %s: the trace does not show what this test looks for", p)
		}
	}
	for _, args := range [][]string{
		{"git-rally", "version"},
		{"git-rally", "claim", "src/a.go"},
		{"git-rally", "check", "src/a.go"},
		{"git-rally", "room", "--json"},
		{"git-rally", "hook", "claude", "pre-tool-use"},
	} {
		got := initialised(run(args...))
		if !got["github.com/spf13/cobra"] && !got["github.com/git-rally/git-rally/cmd/git-rally/cli"] && len(got) < 10 {
			t.Fatalf("%v: no init trace", args)
		}
		for _, p := range servers {
			if got[p] {
				t.Errorf("%v initialised %s", args, p)
			}
		}
		// A hook and a claim answer from cli/early's init, before cobra and the
		// SSH library (which only signing needs) initialise.
		if args[1] == "hook" || args[1] == "claim" {
			for _, p := range []string{"github.com/spf13/cobra", "golang.org/x/crypto/ssh", "github.com/google/jsonschema-go/jsonschema"} {
				if got[p] {
					t.Errorf("%v initialised %s", args, p)
				}
			}
		}
	}
	// A repository that verifies signatures needs package sshsig, which
	// initialises after cli/early: early leaves the claim to the tree.
	run("git", "config", "rally.requireSigned", "true")
	out := run("git-rally", "claim", "src/b.go")
	if got := initialised(out); !got["github.com/spf13/cobra"] || !got["golang.org/x/crypto/ssh"] {
		t.Errorf("claim under rally.requireSigned did not run in the tree:\n%s", out)
	}
	if !strings.Contains(out, "rally.requireSigned is set and rally.sign is not") {
		t.Errorf("claim under rally.requireSigned: %s", out)
	}
}
