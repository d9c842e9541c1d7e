package cli

import (
	"net"

	"github.com/git-rally/git-rally/mcpserver"
	"github.com/git-rally/git-rally/plan/planyaml"
	"github.com/git-rally/git-rally/web"
	"github.com/git-rally/git-rally/web/webapi"
)

// The tests run commands in process with the servers package main gives
// (cmd/git-rally/cli/servers, which imports cli and so cannot be
// imported here).
func init() {
	Use(Servers{MCP: mcpserver.Serve, PlanYAML: planyaml.Parse,
		Web: func(ln net.Listener, o webapi.Options) (WebServer, error) {
			srv, err := web.New(ln, o)
			if err != nil {
				return nil, err
			}
			return srv, nil
		}})
}
