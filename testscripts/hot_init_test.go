package testscripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// A hot command initialises none of the servers' packages: they are in
// git-rally-server (cli/server.go). GODEBUG=inittrace=1 lists every
// package initialised; git-rally-server's mcp --help shows the names this
// test looks for. The hot binary stays at most 16 MB.
func TestHotCommandsSkipServerInit(t *testing.T) {
	prefix := installedBinary(t)
	env := append(userEnv(t, prefix), "GODEBUG=inittrace=1", "RALLY_TOOL=codex:a1")
	dir := t.TempDir()
	run := func(args ...string) string {
		name := args[0]
		if strings.HasPrefix(name, "git-rally") {
			// Not the test binary testscript.Main put on this process's PATH.
			name = filepath.Join(prefix, "bin", name)
		}
		c := exec.Command(name, args[1:]...)
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
	full := initialised(run("git-rally-server", "mcp", "--help"))
	for _, p := range servers {
		if !full[p] {
			t.Fatalf("git-rally-server mcp --help did not initialise %s: the trace does not show what this test looks for", p)
		}
	}
	for _, args := range [][]string{
		{"git-rally", "version"},
		{"git-rally", "claim", "src/a.go"},
		{"git-rally", "check", "src/a.go"},
		{"git-rally", "room", "--json"},
		{"git-rally", "hook", "claude", "pre-tool-use"},
		{"git-rally", "mcp", "--help"},
	} {
		got := initialised(run(args...))
		if !got["github.com/spf13/cobra"] {
			t.Fatalf("%v: no init trace", args)
		}
		for _, p := range servers {
			if got[p] {
				t.Errorf("%v initialised %s", args, p)
			}
		}
	}
	st, err := os.Stat(filepath.Join(prefix, "bin", "git-rally"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("git-rally is %.1f MB", float64(st.Size())/1e6)
	if st.Size() > 16<<20 {
		t.Errorf("git-rally is %d bytes, more than 16 MB", st.Size())
	}
}

// rally's own packages do little work at initialisation, which every
// process pays before its command runs: no regular expression compiled,
// no table of help text built (GODEBUG=inittrace=1 counts each package's
// allocations; cli's two regexps and its examples map were 229, hooks'
// tables of host settings files 57).
func TestHotInitAllocations(t *testing.T) {
	prefix := installedBinary(t)
	c := exec.Command(filepath.Join(prefix, "bin", "git-rally"), "version")
	c.Env = append(userEnv(t, prefix), "GODEBUG=inittrace=1")
	out, _ := c.CombinedOutput()
	line := regexp.MustCompile(`(?m)^init (github\.com/git-rally/git-rally/\S+) @.* (\d+) allocs$`)
	found := 0
	for _, m := range line.FindAllStringSubmatch(string(out), -1) {
		found++
		if n, _ := strconv.Atoi(m[2]); n > 32 {
			t.Errorf("package %s makes %d allocations at initialisation (at most 32): build its tables on first use (sync.OnceValue)", m[1], n)
		}
	}
	if found == 0 {
		t.Fatalf("no init trace of rally's packages:\n%s", out)
	}
}
