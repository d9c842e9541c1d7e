package cli

import (
	"context"
	"errors"
	"io"
	"net"

	"github.com/git-rally/git-rally/mcpserver/call"
	"github.com/git-rally/git-rally/plan"
	"github.com/git-rally/git-rally/web/webapi"
)

// Servers are the parts of three commands that link packages a hot
// command must never initialise: net/http and html/template (serve, demo
// --serve), the MCP SDK (mcp), a YAML parser (plan files). Package cli
// does not import them; cmd/git-rally/cli/servers sets them with Use, and
// package main imports that. Go initialises a package after its imports
// and otherwise in import-path order, so cli's init (hot.go) runs a hot
// command before any of them, and a claim does not pay their
// initialisation (about a millisecond of start-up).
type Servers struct {
	// MCP serves the Model Context Protocol on in and out until ctx
	// ends (mcpserver.Serve).
	MCP func(ctx context.Context, r call.Runner, o call.Options, in io.Reader, out io.Writer) error
	// Web makes the web room on a loopback listener (web.New).
	Web func(ln net.Listener, o webapi.Options) (WebServer, error)
	// PlanYAML parses a plan file written in YAML (planyaml.Parse).
	PlanYAML func(data []byte) (*plan.Plan, error)
}

// WebServer is a web room made by Servers.Web (*web.Server).
type WebServer interface {
	URL(ln net.Listener) string
	Serve(ctx context.Context, ln net.Listener) error
}

var servers Servers

// Use sets the servers; package main calls it (through
// cmd/git-rally/cli/servers) before Main.
func Use(s Servers) { servers = s }

// errNoServer is a command whose server this build did not wire.
var errNoServer = errors.New("this build of git-rally has no server for this command (cmd/git-rally/cli/servers was not linked)")
