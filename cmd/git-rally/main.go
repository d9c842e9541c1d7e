// Command git-rally is installed as `git rally`: agents that share one
// repository append facts to a ledger in git and read the room. The
// long-running commands (serve, demo --serve, mcp) run in git-rally-server,
// which it executes.
package main

import (
	"os"

	"github.com/git-rally/git-rally/cmd/git-rally/cli"
)

// atExit runs after the command, before the process exits: nothing but in
// a build with the tag rallypprof (pprof.go), which writes the profiles.
var atExit = func() {}

func main() {
	code := cli.Main()
	atExit()
	os.Exit(code)
}
