package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"time"

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
	limit, err := mcpCallLimit(os.Getenv("RALLY_MCP_CALL_TIMEOUT"))
	if err != nil {
		return err
	}
	r := newMCPRunner(f.ToolFlag, limit)
	defer r.close()
	out := f.Out
	if out == os.Stdout {
		// Only the protocol may reach stdout.
		os.Stdout = os.Stderr
		defer func() { os.Stdout = out.(*os.File) }()
	}
	return f.server.MCP(ctx, r, call.Options{Version: buildVersion()}, f.In, out)
}

// mcpDefaultLimit is how long one tool call may take before the server
// answers it with a timeout: under the 60 s a host such as Codex gives a
// tool call, so the model hears rally's answer, not its host's.
const mcpDefaultLimit = 50 * time.Second

// mcpWidth is how many calls run at once: a slow call (a write waiting on
// a lock git holds) takes one seat and the others keep answering.
const mcpWidth = 4

func mcpCallLimit(v string) (time.Duration, error) {
	if v == "" {
		return mcpDefaultLimit, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 || d > 24*time.Hour {
		return 0, usagef("RALLY_MCP_CALL_TIMEOUT=%q is not a duration from 1ns to 24h", v)
	}
	return d, nil
}

func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "devel"
}

// mcpRunner runs tool calls as commands, in this process, up to mcpWidth
// at once, each on a factory of its own that lives as long as the server:
// the repository and the ledger (with the projection it last read) stay
// open between calls, while the clock, the identity flags and the streams
// are fresh for each. Calls on two factories are as two rally processes:
// the ledger's file locks order their writes.
type mcpRunner struct {
	flagTool string
	limit    time.Duration
	seats    chan *factory // a factory per free seat (nil: not made yet)
	running  sync.WaitGroup

	idMu  sync.Mutex
	me    string // fixed at the first call
	meErr error

	probeOnce sync.Once
	probe     *cobra.Command
}

func newMCPRunner(flagTool string, limit time.Duration) *mcpRunner {
	r := &mcpRunner{flagTool: flagTool, limit: limit, seats: make(chan *factory, mcpWidth)}
	for i := 0; i < mcpWidth; i++ {
		r.seats <- nil
	}
	return r
}

// close waits for the calls still running (a write past its time limit
// finishes rather than dying half way) and closes every factory.
func (r *mcpRunner) close() {
	r.running.Wait()
	for i := 0; i < mcpWidth; i++ {
		if f := <-r.seats; f != nil {
			f.Close()
		}
	}
}

// Has says whether this build has the command.
func (r *mcpRunner) Has(cmd []string) bool {
	r.probeOnce.Do(func() { r.probe = newRootCmd(newFactory(strings.NewReader(""), io.Discard, io.Discard)) })
	c, rest, err := r.probe.Find(cmd)
	return err == nil && len(rest) == 0 && c != r.probe && c.Name() == cmd[len(cmd)-1]
}

// identity is the server's one author, resolved once: --tool, $RALLY_TOOL,
// the session bound to the rally worktree, the host session the hooks
// name (from the environment, the call's metadata, else the note the
// host's hooks left), git config rally.tool, and last the host's name
// with a random tag.
func (r *mcpRunner) identity(f *factory, host call.Host) (string, error) {
	r.idMu.Lock()
	defer r.idMu.Unlock()
	if r.me != "" || r.meErr != nil {
		return r.me, r.meErr
	}
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

// Run runs one tool call as its command with --json, within the call's
// time limit: past it the call is answered with a timeout error while the
// command finishes on its own seat.
func (r *mcpRunner) Run(ctx context.Context, host call.Host, c call.Call) call.Outcome {
	ctx, cancel := context.WithTimeout(ctx, r.limit)
	defer cancel()
	var f *factory
	select {
	case f = <-r.seats:
	case <-ctx.Done():
		return r.timedOut(c)
	}
	if f == nil {
		f = newFactory(strings.NewReader(""), io.Discard, io.Discard)
	}
	done := make(chan call.Outcome, 1)
	r.running.Add(1)
	go func() {
		defer r.running.Done()
		defer func() { r.seats <- f }()
		// The command runs to its end even when the caller stopped
		// waiting: a write is never cut off half way.
		done <- r.run(context.WithoutCancel(ctx), f, host, c)
	}()
	select {
	case o := <-done:
		return o
	case <-ctx.Done():
		return r.timedOut(c)
	}
}

// timedOut is the answer to a call that did not finish within its limit.
func (r *mcpRunner) timedOut(c call.Call) call.Outcome {
	msg := fmt.Sprintf("%s did not finish within %s (RALLY_MCP_CALL_TIMEOUT); it may still complete", strings.Join(c.Cmd, " "), r.limit)
	return call.Outcome{Exit: 1, Error: call.ErrorObject(1, "timeout", msg,
		[]string{"read rally_room before calling again: a write may have landed"})}
}

func (r *mcpRunner) run(ctx context.Context, f *factory, host call.Host, c call.Call) call.Outcome {
	me, err := r.identity(f, host)
	if err != nil {
		return failure(err, nil, nil)
	}
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
