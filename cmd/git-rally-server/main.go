// Command git-rally-server runs git rally's long-running commands: serve
// (the web room), demo --serve (the scenario runner) and mcp (the MCP
// server), and reads YAML plan files for git-rally. It links what the hot
// binary must not (net/http, html/template, the MCP SDK, a YAML parser);
// git-rally executes it, found beside itself or on PATH.
package main

import (
	"os"

	"github.com/git-rally/git-rally/cmd/git-rally-server/server"
	"github.com/git-rally/git-rally/cmd/git-rally/cli"
)

func main() {
	os.Exit(cli.ServerMain(server.Parts))
}
