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
					t.Errorf("%s imports %s: dependencies point down (cli -> hooks, plan, worktree, facts -> refs)", pkg, dep)
				}
			}
		}
	}
}

var rank = map[string]int{"refs": 0, "facts": 1, "worktree": 2, "hooks": 3, "mcpserver": 3, "web": 3, "plan": 3, "session": 4, "cmd/git-rally/cli": 5, "cmd/git-rally": 6, "testscripts": 7}

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

// What the hook command runs on before cobra initialises (cli/early) must
// not need what would make Go initialise it late: cobra (text/template
// sorts after nearly everything), the SSH library and the network (facts
// and refs reach signatures through refs.SSH), nor the servers' packages.
func TestEarlyPathImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/git-rally/git-rally/cmd/git-rally/cli/early").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		deps[p] = true
	}
	if !deps["github.com/git-rally/git-rally/facts"] {
		t.Fatalf("go list -deps does not list facts: %s", out)
	}
	for _, p := range []string{"github.com/spf13/cobra", "text/template", "golang.org/x/crypto/ssh", "crypto/ed25519", "net",
		"net/http", "github.com/git-rally/git-rally/sshsig", "github.com/modelcontextprotocol/go-sdk/mcp", "go.yaml.in/yaml/v3"} {
		if deps[p] {
			t.Errorf("cli/early depends on %s", p)
		}
	}
}
