package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/hooks"
	"github.com/git-rally/git-rally/mcpserver/call"
	"github.com/git-rally/git-rally/refs"
	"github.com/git-rally/git-rally/worktree"
)

func newCmdMCP(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "mcp [--tool T]",
		Short: "Serve rally's commands as MCP tools on stdio, for agent hosts",
		Long: `git rally mcp serves the Model Context Protocol on stdin and stdout, so an
agent host (Claude Code, Codex, Gemini CLI, Cursor) offers rally's commands
to its model as tools: rally_room, rally_claim, rally_release,
rally_check_before_write, rally_handoff, rally_inbox, rally_next and more.
Each tool runs the command of the same name and answers with its JSON.

Every call acts as one identity, fixed for the server's life: --tool, else
$RALLY_TOOL or the session of the rally worktree it runs in, else the host
session that started it (as its hooks name it: Claude Code says its
session id, Codex names it in each call), else git config
rally.tool, else the host's name and a random tag.

Register it for a host with: git rally hooks install --claude --mcp`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if f.server == nil {
				return f.execServer()
			}
			return runMCP(c.Context(), f)
		},
	}
}

func runMCP(ctx context.Context, f *factory) error {
	if ctx == nil {
		ctx = context.Background()
	}
	r := &mcpRunner{f: newFactory(strings.NewReader(""), io.Discard, io.Discard), flagTool: f.ToolFlag}
	defer r.f.Close()
	out := f.Out
	if out == os.Stdout {
		// Only the protocol may reach stdout.
		os.Stdout = os.Stderr
		defer func() { os.Stdout = out.(*os.File) }()
	}
	return f.server.MCP(ctx, r, call.Options{Version: buildVersion()}, f.In, out)
}

func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "devel"
}

// mcpRunner runs tool calls as commands, in this process, one at a time.
// Its factory lives as long as the server: the repository and the ledger
// (with the projection it last read) stay open between calls, while the
// clock, the identity flags and the streams are fresh for each.
type mcpRunner struct {
	mu       sync.Mutex
	f        *factory
	flagTool string
	me       string // fixed at the first call
	meErr    error
	probe    *cobra.Command
}

// Has says whether this build has the command.
func (r *mcpRunner) Has(cmd []string) bool {
	if r.probe == nil {
		r.probe = newRootCmd(newFactory(strings.NewReader(""), io.Discard, io.Discard))
	}
	c, rest, err := r.probe.Find(cmd)
	return err == nil && len(rest) == 0 && c != r.probe && c.Name() == cmd[len(cmd)-1]
}

// identity is the server's one author, resolved once: --tool, $RALLY_TOOL,
// the session bound to the rally worktree, the host session the hooks
// name (from the environment, the call's metadata, else the note the
// host's hooks left), git config rally.tool, and last the host's name
// with a random tag.
func (r *mcpRunner) identity(host call.Host) (string, error) {
	if r.me != "" || r.meErr != nil {
		return r.me, r.meErr
	}
	f := r.f
	me := r.flagTool
	if me == "" {
		me = os.Getenv("RALLY_TOOL")
	}
	repo, repoErr := f.Repo()
	if me == "" && repoErr == nil {
		if name := worktree.SessionName(repo); name != "" {
			if st, err := f.State(); err == nil && st.Sessions[name] != nil {
				me = st.Sessions[name].Tool
			}
		}
	}
	if me == "" {
		me, _ = hooks.HostSessionTool(os.Getenv)
	}
	if me == "" && host.Session != "" {
		me, _ = hooks.SessionTool(host.Family, host.Session)
	}
	if me == "" && repoErr == nil {
		me, _ = hooks.HostProcessTool(repo)
	}
	if me == "" && repoErr == nil {
		if v, err := refs.Git(repo.Dir(), nil, "config", "--get", "rally.tool"); err == nil {
			me = strings.TrimSpace(v)
		}
	}
	if me == "" {
		me = call.ClientTool(host.Client, randomTag())
	}
	if err := facts.CheckTool(me); err != nil {
		r.meErr = err
		return "", err
	}
	r.me = me
	return me, nil
}

func randomTag() string {
	b := make([]byte, 4)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Run runs one tool call as its command with --json.
func (r *mcpRunner) Run(ctx context.Context, host call.Host, c call.Call) call.Outcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	me, err := r.identity(host)
	if err != nil {
		return failure(err, nil, nil)
	}
	f := r.f
	var out, errb bytes.Buffer
	f.Out, f.Err = &out, &errb
	f.ResetCall()
	args := append(append([]string{}, c.Cmd...), c.Flags...)
	args = append(append(args, "--tool="+me, "--json", "--"), c.Args...)
	root := newRootCmd(f)
	root.SetArgs(args)
	root.SetIn(strings.NewReader(""))
	root.SetOut(&out)
	root.SetErr(&errb)
	err = root.ExecuteContext(ctx)
	for _, w := range f.Warnings() {
		errb.WriteString("git-rally: warning: " + w + "\n")
	}
	if err == nil {
		return call.Outcome{Stdout: out.Bytes(), Stderr: errb.Bytes()}
	}
	// As Run does: with --json, a failure prints its error object.
	code, msg, hint := cmdutil.Classify(err)
	out.Reset()
	f.PrintErrorJSON(args, err, code, msg, hint)
	return failure(err, out.Bytes(), errb.Bytes())
}

// failure is a failed command's outcome: the error object the command
// printed with --json, else the one it would have printed (a failure
// before the command ran: no identity).
func failure(err error, stdout, stderr []byte) call.Outcome {
	code, msg, hint := cmdutil.Classify(err)
	o := call.Outcome{Stderr: stderr, Exit: code}
	if !hasErrorObject(stdout) {
		var buf bytes.Buffer
		newFactory(nil, &buf, io.Discard).PrintErrorJSON([]string{"--json"}, err, code, msg, hint)
		stdout = buf.Bytes()
	}
	if !hasErrorObject(stdout) {
		// check --strict's stop has no object; no tool passes --strict.
		stdout = call.ErrorObject(code, "error", err.Error(), nil)
	}
	o.Error = stdout
	return o
}

func hasErrorObject(b []byte) bool {
	var printed struct {
		Error json.RawMessage `json:"error"`
	}
	return json.Unmarshal(b, &printed) == nil && len(printed.Error) > 0
}
