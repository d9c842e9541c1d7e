package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/ledger"
	"github.com/git-rally/git-rally/web/webapi"
	"github.com/git-rally/git-rally/worktree"
)

type serveOptions struct {
	addr     string
	open     bool
	readOnly bool
	j        jsonFlags
}

func newCmdServe(f *factory) *cobra.Command {
	opts := &serveOptions{}
	c := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:PORT] [--open] [--tool <tool>] [--read-only] [--json]",
		Short: "The room as a live web page on loopback, where a person reviews",
		Long: `Serve this room as a web page on a loopback address: the room, the history,
the worktree plan and the plans' task boards, updated within a second of a new
fact, and each agent's work: its activity, its terminal's last lines, its
branch's diff against the base and the conflicts predicted with the other
agents' branches. It prints the URL to open (--json: one document,
{"url", "pid"}); --open also starts a browser, and says so on stderr when
none opens. A port in use is exit 1. The URL carries a random token,
and requests without it, or with a Host or Origin other than this loopback
address, get 403. It needs nothing from the network.

A comment on a line of a diff, a file or a whole change is sent to the
agent as one handoff (files as path:line, the reviewed commit as revision),
authored by --tool (else the usual identity) and delivered as the handoff
command delivers. Without an identity, or with --read-only, the page only
shows. Writes take POST, the URL's token, the page's anti-forgery token
(header X-Rally-CSRF) and a matching or absent Origin; anything else is 403.

/api/room, /api/log, /api/worktrees and /api/plan answer with the commands'
JSON; /api/diff?branch=rally/<name> with the branch's diff; POST
/api/handoff with the handoff command's.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if f.server == nil {
				return f.execServer()
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runServe(ctx, f, opts, nil)
		},
	}
	c.Flags().StringVar(&opts.addr, "addr", "127.0.0.1:0", "loopback address to listen on (port 0: any free port)")
	c.Flags().BoolVar(&opts.open, "open", false, "open the page in a browser")
	c.Flags().BoolVar(&opts.readOnly, "read-only", false, "offer no write: the page shows and sends nothing")
	addJSONFlags(c, &opts.j)
	return c
}

// runServe serves until ctx ends; ready, when set, gets the URL once the
// server listens.
func runServe(ctx context.Context, f *factory, opts *serveOptions, ready func(url string, srv WebServer)) error {
	if err := webapi.CheckAddr(opts.addr); err != nil {
		return &usageError{Msg: err.Error(), Hint: "git rally serve --addr 127.0.0.1:8377"}
	}
	l, err := f.Ledger()
	if err != nil {
		return err
	}
	ln, err := listenLoopback(opts.addr, "git rally serve")
	if err != nil {
		return err
	}
	src := &serveSource{ledger: l, predict: !opts.readOnly}
	if src.repo, err = f.Repo(); err != nil {
		ln.Close()
		return err
	}
	wo := webapi.Options{Source: src, Now: serveNow, ReadOnly: opts.readOnly}
	if !opts.readOnly {
		o, err := f.Identity()
		if err != nil {
			wo.ReadOnlyWhy = "no identity to send a review as: start it with git rally serve --tool human:<you>"
		} else {
			wo.Tool, src.tool = o.Tool, o.Tool
		}
	}
	// The watcher reads the ref on a ledger of its own, in its own goroutine.
	wl, err := ledger.Open(l.Store.CommonDir, serveNow)
	if err != nil {
		ln.Close()
		return err
	}
	defer wl.Close()
	fw := wl.Watch(500 * time.Millisecond)
	defer fw.Close()
	wo.Watcher = &webapi.WaitWatcher{W: fw, Head: wl.HeadString}
	srv, err := f.server.Web(ln, wo)
	if err != nil {
		ln.Close()
		return err
	}
	url := srv.URL(ln)
	if err := printServing(f, &opts.j, url); err != nil {
		ln.Close()
		return err
	}
	switch {
	case wo.Tool != "":
		fmt.Fprintf(f.Err, "git-rally: serving the room on loopback; reviews are sent as %s; Ctrl-C stops\n", wo.Tool)
	case opts.readOnly:
		fmt.Fprintln(f.Err, "git-rally: serving the room read-only on loopback (--read-only); Ctrl-C stops")
	default:
		fmt.Fprintln(f.Err, "git-rally: serving the room read-only on loopback (no identity: --tool human:<you> sends reviews); Ctrl-C stops")
	}
	if opts.open {
		go openBrowser(f, url)
	}
	if ready != nil {
		ready(url, srv)
	}
	return srv.Serve(ctx, ln)
}

// serveNow is RALLY_NOW when set, read at every use, else the clock.
func serveNow() time.Time {
	if v := os.Getenv("RALLY_NOW"); v != "" {
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			return t
		}
	}
	return time.Now()
}

// serveSource answers the web room by running the very commands, in
// process, with --json: the page shows what `git rally room --json` says.
type serveSource struct {
	mu     sync.Mutex // one command at a time
	hmu    sync.Mutex // the ledger below
	ledger *ledger.Ledger
	repo   *worktree.Repo
	tool   string // reviews are sent as this identity

	// predict: record the conflicts between agent branches serve sees
	// move (not with --read-only); pmu runs one prediction at a time.
	predict bool
	pmu     sync.Mutex
}

func (s *serveSource) run(args ...string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out, errb bytes.Buffer
	if code := Run(args, strings.NewReader(""), &out, &errb); code != 0 {
		msg := strings.TrimSpace(errb.String())
		if code == ExitUsage && strings.Contains(msg, "unknown command") {
			return nil, fmt.Errorf("git rally %s: %w", args[0], webapi.ErrUnavailable)
		}
		return nil, &webapi.CommandError{Exit: code, JSON: bytes.TrimSpace(out.Bytes()),
			Msg: fmt.Sprintf("git rally %s exited %d: %s", strings.Join(args, " "), code, msg)}
	}
	return out.Bytes(), nil
}

func (s *serveSource) Room() ([]byte, error)      { return s.run("room", "--json") }
func (s *serveSource) Worktrees() ([]byte, error) { return s.run("worktree", "plan", "--json") }
func (s *serveSource) Plan(name string) ([]byte, error) {
	if name != "" {
		return s.run("plan", "status", "--json", "--", name)
	}
	return s.run("plan", "status", "--json")
}

func (s *serveSource) Log(kind, tool string, n int) ([]byte, error) {
	args := []string{"log", "--json"}
	if kind != "" {
		args = append(args, "--kind="+kind)
	}
	if tool != "" {
		args = append(args, "--tool="+tool)
	}
	if n > 0 {
		args = append(args, "-n", strconv.Itoa(n))
	}
	return s.run(args...)
}

func (s *serveSource) Head() (string, error) {
	s.hmu.Lock()
	defer s.hmu.Unlock()
	h, err := s.ledger.Head()
	if err != nil || h.IsZero() {
		return "", err
	}
	return h.String(), nil
}

func (s *serveSource) Commits(ids []string) (map[string]string, error) {
	s.hmu.Lock()
	defer s.hmu.Unlock()
	return s.ledger.FactCommits(ids, len(ids)+64)
}

// Diff is GET /api/diff: the branch against the base `worktree plan`
// uses, and its predicted conflicts with every other live branch (one
// whose session was not stopped or removed), each with its owner.
func (s *serveSource) Diff(branch string) ([]byte, error) {
	s.hmu.Lock()
	st, err := s.ledger.Read()
	s.hmu.Unlock()
	if err != nil {
		return nil, err
	}
	owner, stopped := facts.BranchOwners(st)
	d, err := s.repo.Diff(branch, "", func(b string) bool { return !stopped[b] })
	if err != nil {
		return nil, err
	}
	type file struct {
		Path    string `json:"path"`
		Added   int    `json:"added"`
		Removed int    `json:"removed"`
		Binary  bool   `json:"binary,omitempty"`
	}
	type conflict struct {
		Branch string   `json:"branch"`
		Owner  string   `json:"owner,omitempty"`
		Files  []string `json:"files"`
	}
	out := struct {
		Branch    string     `json:"branch"`
		Owner     string     `json:"owner,omitempty"`
		Base      string     `json:"base"`
		BaseHead  string     `json:"base_head"`
		Revision  string     `json:"revision"`
		Files     []file     `json:"files"`
		Diff      string     `json:"diff"`
		Truncated bool       `json:"truncated,omitempty"`
		Conflicts []conflict `json:"conflicts"`
	}{Branch: d.Branch, Owner: owner[d.Branch], Base: d.Base, BaseHead: d.BaseHead, Revision: d.Revision, Diff: d.Diff,
		Truncated: d.Truncated, Files: []file{}, Conflicts: []conflict{}}
	for _, fc := range d.Files {
		out.Files = append(out.Files, file{fc.Path, fc.Added, fc.Removed, fc.Binary})
	}
	for _, c := range d.Conflicts {
		out.Conflicts = append(out.Conflicts, conflict{Branch: c.B, Owner: owner[c.B], Files: c.Files})
	}
	return json.Marshal(out)
}

func (s *serveSource) Branches() (string, error) { return s.repo.BranchStamp(), nil }

// BranchesMoved predicts, read-only, the merge of every pair of live agent
// branches and records each new conflict as the post-commit hook does
// (SPEC §16: serve seeing a branch move), for commits made where rally's
// hook did not run. A conflict recorded already writes nothing.
func (s *serveSource) BranchesMoved() {
	if !s.predict {
		return
	}
	s.pmu.Lock()
	defer s.pmu.Unlock()
	s.hmu.Lock()
	st, err := s.ledger.Read()
	s.hmu.Unlock()
	if err != nil {
		return
	}
	owner, stopped := facts.BranchOwners(st)
	bs, err := s.repo.RallyBranches()
	if err != nil {
		return
	}
	pairs, err := s.repo.ConflictsAmong(bs, func(b string) bool { return !stopped[b] })
	if err != nil || len(pairs) == 0 {
		return
	}
	ovs := make([]facts.BranchOverlap, len(pairs))
	for i, p := range pairs {
		ovs[i] = facts.BranchOverlap{A: p.A, B: p.B, OwnerA: owner[p.A], OwnerB: owner[p.B], Files: p.Files}
	}
	s.hmu.Lock()
	defer s.hmu.Unlock()
	s.ledger.Append(facts.OverlapRisks(ovs))
}

func (s *serveSource) Capture(session string, lines int) ([]string, error) {
	b, err := s.run("capture", "--json", "--lines="+strconv.Itoa(lines), "--", session)
	if err != nil {
		return nil, err
	}
	var v struct {
		Lines []string `json:"lines"`
	}
	err = json.Unmarshal(b, &v)
	return v.Lines, err
}

// Handoff runs the handoff command as the server's identity: the same
// recording and delivery as `git rally handoff`. Every field goes in as
// --flag=value, so no text can become a flag; files are taken relative to
// the top of the repository, not serve's directory.
func (s *serveSource) Handoff(h webapi.HandoffRequest) ([]byte, error) {
	if s.tool == "" {
		return nil, &usageError{Msg: "serve has no identity to send a review as"}
	}
	args := []string{"handoff", "--json", "--tool=" + s.tool, "--target=" + h.Target, "--subject=" + h.Subject}
	if h.Body != "" {
		args = append(args, "--body="+h.Body)
	}
	for _, f := range h.Files {
		if s.repo.WorkTree != "" && !filepath.IsAbs(f) {
			f = filepath.Join(s.repo.WorkTree, filepath.FromSlash(f))
		}
		args = append(args, "--file="+f)
	}
	if h.Revision != "" {
		args = append(args, "--revision="+h.Revision)
	}
	return s.run(args...)
}

// listenLoopback listens on a loopback address checked already; a port
// in use is exit 1 with the command to run on any free port.
func listenLoopback(addr, command string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, &facts.FailedError{Err: fmt.Errorf("%s is in use (another git rally serve or demo --serve?)", addr),
			Hint: command + " --addr 127.0.0.1:0   # any free port"}
	}
	return ln, err
}

// printServing prints the URL to open: a line, or with --json one
// document with the URL and the serving process's pid (to stop it).
func printServing(f *factory, j *jsonFlags, url string) error {
	if !j.On() {
		_, err := fmt.Fprintln(f.Out, url)
		return err
	}
	return f.PrintJSON(j, map[string]any{"url": url, "pid": os.Getpid()})
}

// browserWait is how long openBrowser waits for the opener to fail
// before taking it that a browser opened (xdg-open returns once the
// browser has started; a missing one makes it fail at once).
const browserWait = 10 * time.Second

// openBrowser is the one place serve starts a browser. An opener that is
// missing or fails (xdg-open with no browser to run) is a note on stderr,
// never an error: the page is served either way.
func openBrowser(f *factory, url string) {
	name := "xdg-open"
	if runtime.GOOS == "darwin" {
		name = "open"
	}
	var errb bytes.Buffer
	c := exec.Command(name, url)
	c.Stderr = &errb
	err := c.Start()
	if err == nil {
		done := make(chan error, 1)
		go func() { done <- c.Wait() }()
		select {
		case err = <-done:
		case <-time.After(browserWait):
			return
		}
	}
	if err == nil {
		return
	}
	why := err.Error()
	if msg := strings.TrimSpace(errb.String()); msg != "" {
		why = facts.Sanitize(msg, 200)
	}
	fmt.Fprintf(f.Err, "git-rally: note: no browser opened (%s: %s); open the URL above yourself\n", name, why)
}
