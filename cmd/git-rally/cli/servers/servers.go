// Package servers gives the command line its servers: the web room
// (net/http, html/template), the MCP server (the MCP SDK) and the YAML
// plan reader. Package cli does not import them, so that a hot command,
// run from cli's init, never initialises them (see cli.Servers).
package servers

import (
	"net"

	"github.com/git-rally/git-rally/cmd/git-rally/cli"
	"github.com/git-rally/git-rally/mcpserver"
	"github.com/git-rally/git-rally/plan/planyaml"
	"github.com/git-rally/git-rally/web"
	"github.com/git-rally/git-rally/web/webapi"
)

// Use gives cli every server.
func Use() {
	cli.Use(cli.Servers{MCP: mcpserver.Serve, Web: newWeb, PlanYAML: planyaml.Parse})
}

func newWeb(ln net.Listener, o webapi.Options) (cli.WebServer, error) {
	srv, err := web.New(ln, o)
	if err != nil {
		return nil, err
	}
	return srv, nil
}
