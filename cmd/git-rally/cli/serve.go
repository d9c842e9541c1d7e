package cli

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/web/webapi"
)

type serveOptions struct {
	addr string
	open bool
}

func newCmdServe(f *factory) *cobra.Command {
	opts := &serveOptions{}
	c := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:PORT] [--open]",
		Short: "The room as a live web page on loopback",
		Long: `Serve this room as a web page on a loopback address: the room, the history,
the worktree plan and the plans' task boards, updated within a second of a new
fact. It prints the URL to open; the URL carries a random token, and requests
without it, or with a Host or Origin other than this loopback address, get
403. It is read-only and needs nothing from the network. /api/room, /api/log,
/api/worktrees and /api/plan answer with the commands' JSON.`,
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
	ln, err := net.Listen("tcp", opts.addr)
	if err != nil {
		return err
	}
	src := &serveSource{ledger: l}
	// The watcher reads the ref on a ledger of its own, in its own goroutine.
	wl, err := facts.Open(l.Store.CommonDir, serveNow)
	if err != nil {
		ln.Close()
		return err
	}
	defer wl.Close()
	fw := wl.Watch(500 * time.Millisecond)
	defer fw.Close()
	srv, err := f.server.Web(ln, webapi.Options{Source: src, Now: serveNow, Watcher: &webapi.WaitWatcher{W: fw, Head: wl.HeadString}})
	if err != nil {
		ln.Close()
		return err
	}
	url := srv.URL(ln)
	fmt.Fprintln(f.Out, url)
	fmt.Fprintln(f.Err, "git-rally: serving the room read-only on loopback; Ctrl-C stops")
	if opts.open {
		if err := openBrowser(url); err != nil {
			fmt.Fprintf(f.Err, "git-rally: warning: could not open a browser: %v\n", err)
		}
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
	ledger *facts.Ledger
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

// openBrowser is the one place serve starts a browser.
func openBrowser(url string) error {
	name := "xdg-open"
	if runtime.GOOS == "darwin" {
		name = "open"
	}
	return exec.Command(name, url).Start()
}
