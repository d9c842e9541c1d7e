package testscripts

import (
	"os/exec"
	"strings"
	"testing"
)

// The house rules of the layout: go-git only in refs, cobra only in the
// CLI package, and dependencies pointing down.
func TestImportRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "github.com/git-rally/git-rally/...").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	const mod = "github.com/git-rally/git-rally/"
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, imports := strings.TrimPrefix(fields[0], mod), fields[1:]
		for _, imp := range imports {
			switch {
			case strings.HasPrefix(imp, "github.com/go-git/") && pkg != "refs":
				t.Errorf("%s imports %s: only refs may use go-git", pkg, imp)
			case strings.HasPrefix(imp, "github.com/spf13/cobra") && pkg != "cmd/git-rally/cli":
				t.Errorf("%s imports %s: only the CLI may use cobra", pkg, imp)
			case strings.HasPrefix(imp, mod):
				dep := strings.TrimPrefix(imp, mod)
				if !allowed(pkg, dep) {
					t.Errorf("%s imports %s: dependencies point down (cli -> hooks, plan, worktree, ledger -> facts, refs)", pkg, dep)
				}
			}
		}
	}
}

// refs and facts are both at the bottom: facts (the rules) is pure and
// imports neither refs nor ledger; ledger (the storage engine) joins them.
// delivery (over facts) and sshsig (over refs) are leaves beside ledger.
// docs/ARCHITECTURE.md, "Packages", lists the same order.
var rank = map[string]int{"refs": 0, "facts": 0, "ledger": 1, "delivery": 1, "sshsig": 1, "worktree": 2, "hooks": 3, "mcpserver": 3, "web": 3, "plan": 3, "session": 4, "cmd/git-rally/cli": 5, "cmd/git-rally": 6, "cmd/git-rally-server": 6, "testscripts": 7}

func allowed(pkg, dep string) bool {
	top := func(p string) string {
		for k := range rank {
			if p == k || strings.HasPrefix(p, k+"/") && k != "cmd/git-rally" {
				return k
			}
		}
		return p
	}
	a, b := top(pkg), top(dep)
	ra, okA := rank[a]
	rb, okB := rank[b]
	if !okA || !okB {
		return true // bench and tools may use anything
	}
	return rb < ra || a == b
}

// The hot binary, which agents run before every write, links none of what
// only the servers need: they live in git-rally-server (cli/server.go).
func TestHotBinaryImports(t *testing.T) {
	deps := func(pkg string) map[string]bool {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		m := map[string]bool{}
		for _, p := range strings.Fields(string(out)) {
			m[p] = true
		}
		return m
	}
	hot, server := deps("github.com/git-rally/git-rally/cmd/git-rally"), deps("github.com/git-rally/git-rally/cmd/git-rally-server")
	for _, p := range []string{"net/http", "html/template", "github.com/modelcontextprotocol/go-sdk/mcp", "go.yaml.in/yaml/v3"} {
		if !server[p] {
			t.Errorf("git-rally-server does not link %s: this test no longer looks for the right names", p)
		}
		if hot[p] {
			t.Errorf("git-rally links %s, which only git-rally-server may", p)
		}
	}
	// Their package initialisation costs every process (bench/README.md,
	// start-up notes): encoding/gob came with go-git's config parser
	// (gcfg); refs reads git's config files itself (refs/gitconfig.go).
	for _, p := range []string{"encoding/gob", "github.com/go-git/gcfg", "github.com/go-git/go-git/v5/plumbing/format/config"} {
		if hot[p] {
			t.Errorf("git-rally links %s", p)
		}
	}
}
