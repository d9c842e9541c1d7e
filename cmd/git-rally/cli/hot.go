package cli

import (
	"os"

	// The hook command answers from early's init, before cobra's.
	_ "github.com/git-rally/git-rally/cmd/git-rally/cli/early"
	// SSH signatures (refs.SSH) for every command the tree runs.
	_ "github.com/git-rally/git-rally/sshsig"
)

// A hot command runs from cli's init and exits there, before main: Go
// initialises a package after the packages it imports and otherwise in
// import-path order, so at this point the packages only the servers need
// (net/http, html/template, the MCP SDK, the YAML parser: see Servers)
// have not initialised, and a claim or a hook does not pay for them.
// The hot tree uses only hotCommands, a variable, set before any init
// function runs; never what other files' init functions register.
func init() {
	if isHot(os.Args[1:]) {
		os.Exit(Main())
	}
}

// isHot reports whether newTree runs args in the hot tree.
func isHot(args []string) bool {
	if len(args) == 0 || fullTree {
		return false
	}
	_, ok := hotCommands[args[0]]
	return ok && !wantsHelp(args)
}
