// Package hotdeps is a start-up probe: linked into git-rally with the
// build tag rallyprobe (cmd/git-rally/probe.go), it imports a hot
// command's packages (facts, refs, worktree, hooks, the cobra-free
// cmdutil) and its init exits when asked to. Go initialises a package
// after its imports and otherwise in import-path order, so this is the
// earliest a command can start that needs the ledger but not cobra (whose
// text/template sorts after nearly every other package): where the hook
// command starts (cli/early).
package hotdeps

import (
	"os"

	_ "github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	_ "github.com/git-rally/git-rally/facts"
	_ "github.com/git-rally/git-rally/hooks"
	_ "github.com/git-rally/git-rally/refs"
	_ "github.com/git-rally/git-rally/worktree"
)

func init() {
	if len(os.Args) == 2 && os.Args[1] == "__probe-hotdeps" {
		os.Stdout.WriteString("hotdeps\n")
		os.Exit(0)
	}
}
