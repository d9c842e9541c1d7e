package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/mcpserver/call"
	"github.com/git-rally/git-rally/plan"
	"github.com/git-rally/git-rally/web/webapi"
)

// ServerName is the second binary: the long-running commands (serve,
// demo --serve, mcp) and the YAML plan reader live there, so that
// git-rally, which agents run before every write, links neither net/http,
// html/template, the MCP SDK nor a YAML parser (git's own git-remote-http
// beside git is the model). git-rally executes it for those commands.
const ServerName = "git-rally-server"

// Server is what only git-rally-server links: cmd/git-rally-server's main
// passes it to ServerMain. In git-rally it is nil, and the commands that
// need it execute git-rally-server instead.
type Server struct {
	// MCP serves the Model Context Protocol on in and out until ctx
	// ends (mcpserver.Serve).
	MCP func(ctx context.Context, r call.Runner, o call.Options, in io.Reader, out io.Writer) error
	// Web makes the web room on a loopback listener (web.New).
	Web func(ln net.Listener, o webapi.Options) (WebServer, error)
	// PlanYAML turns a plan file written in YAML into its JSON
	// (planyaml.ToJSON).
	PlanYAML func(data []byte) ([]byte, error)
}

// WebServer is a web room made by Server.Web (*web.Server).
type WebServer interface {
	URL(ln net.Listener) string
	Serve(ctx context.Context, ln net.Listener) error
}

// ServerMain runs git-rally-server's command line: the same tree as
// git-rally's, with the servers linked.
func ServerMain(s Server) int {
	return run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, &s)
}

// serverPath finds git-rally-server: beside this executable, else on PATH.
func serverPath() (string, error) {
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), ServerName)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	if p, err := exec.LookPath(ServerName); err == nil {
		return p, nil
	}
	return "", &usageError{Code: "no-server", Msg: ServerName + " is not installed: serve, demo --serve, mcp and YAML plans run in it",
		Hint: "go install github.com/git-rally/git-rally/cmd/...@latest (installs git-rally and " + ServerName + " side by side)"}
}

// execServer runs this command line in git-rally-server with the
// command's streams, and passes its exit status on.
func (f *factory) execServer() error {
	p, err := serverPath()
	if err != nil {
		return err
	}
	cmd := exec.Command(p, f.args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = f.In, f.Out, f.Err
	// Ctrl-C and a host's SIGTERM reach the server, which stops cleanly;
	// this process waits for it instead of dying first.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if err = cmd.Start(); err != nil {
		return fmt.Errorf("running %s: %w", ServerName, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case s := <-sigs:
			cmd.Process.Signal(s)
			continue
		case err = <-done:
		}
		break
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return &exitError{Code: 128 + int(ws.Signal())} // as a shell reports it
		}
		return &exitError{Code: ee.ExitCode()}
	}
	if err != nil {
		return fmt.Errorf("running %s: %w", ServerName, err)
	}
	return nil
}

// planYAML parses a YAML plan: in git-rally-server directly, in
// git-rally through git-rally-server's hidden plan-yaml command, which
// turns it into the plan's JSON.
func (f *factory) planYAML(data []byte) (*plan.Plan, error) {
	if f.server != nil {
		j, err := f.server.PlanYAML(data)
		if err != nil {
			return nil, err
		}
		return plan.ParseConverted(j)
	}
	p, err := serverPath()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(p, planYAMLCommand)
	cmd.Stdin = strings.NewReader(string(data))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		msg := strings.TrimSpace(strings.TrimPrefix(strings.SplitN(stderr.String(), "\n", 2)[0], "git-rally: error: "))
		return nil, &usageError{Msg: msg}
	}
	if err != nil {
		return nil, fmt.Errorf("running %s: %w", ServerName, err)
	}
	return plan.ParseConverted(out)
}

// planYAMLCommand is git-rally-server's hidden command that reads a YAML
// plan on stdin and prints its JSON (planYAML).
const planYAMLCommand = "plan-yaml"

func newCmdPlanYAML(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:    planYAMLCommand,
		Short:  "Print a YAML plan file, read on stdin, as JSON",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if f.server == nil {
				return f.execServer()
			}
			data, err := io.ReadAll(f.In)
			if err != nil {
				return err
			}
			j, err := f.server.PlanYAML(data)
			if err != nil {
				return err
			}
			_, err = f.Out.Write(j)
			return err
		},
	}
}
