// Command git-rally is installed as `git rally`: agents that share one
// repository append facts to a ledger in git and read the room.
package main

import (
	"os"

	"github.com/git-rally/git-rally/cmd/git-rally/cli"
	"github.com/git-rally/git-rally/cmd/git-rally/cli/servers"
)

// A hot command (claim, check, hook, room, ...) never gets here: package
// cli runs it from its init, before the servers' packages initialise
// (cli/hot.go).
func main() {
	servers.Use()
	os.Exit(cli.Main())
}
