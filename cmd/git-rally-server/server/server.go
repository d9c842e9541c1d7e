// Package server holds what git-rally-server links and git-rally must
// not: the web room (net/http, html/template), the MCP server (the MCP
// SDK) and the YAML plan reader. cmd/git-rally-server's main, and the
// testscripts' git-rally-server, pass Parts to cli.ServerMain.
package server

import (
	"net"

	"github.com/git-rally/git-rally/cmd/git-rally/cli"
	"github.com/git-rally/git-rally/mcpserver"
	"github.com/git-rally/git-rally/plan/planyaml"
	"github.com/git-rally/git-rally/web"
	"github.com/git-rally/git-rally/web/webapi"
)

// Parts are the servers.
var Parts = cli.Server{MCP: mcpserver.Serve, Web: newWeb, PlanYAML: planyaml.ToJSON}

func newWeb(ln net.Listener, o webapi.Options) (cli.WebServer, error) {
	srv, err := web.New(ln, o)
	if err != nil {
		return nil, err
	}
	return srv, nil
}
