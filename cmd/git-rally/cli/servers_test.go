package cli

import (
	"net"

	"github.com/git-rally/git-rally/mcpserver"
	"github.com/git-rally/git-rally/plan/planyaml"
	"github.com/git-rally/git-rally/web"
	"github.com/git-rally/git-rally/web/webapi"
)

// testServer is git-rally-server's Parts, for tests that run its commands
// in process (package cmd/git-rally-server/server imports cli, so this
// test cannot import it).
var testServer = &Server{MCP: mcpserver.Serve, PlanYAML: planyaml.ToJSON,
	Web: func(ln net.Listener, o webapi.Options) (WebServer, error) {
		srv, err := web.New(ln, o)
		if err != nil {
			return nil, err
		}
		return srv, nil
	}}
