// Package webapi is what the web room asks of the command line: a Source
// of the commands' JSON, a Runner for the demo's scenarios, a Watcher of
// the ledger's head, the Options of a server, and the loopback check. It
// links no net/http or html/template, so the command line implements
// them without that package initialisation in every hook and claim (web
// has the server, and aliases these types).
package webapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"time"
)

// Source answers with the commands' JSON (room --json, log --json, ...):
// the server renders and serves exactly what the commands print.
type Source interface {
	Room() ([]byte, error)
	Log(kind, tool string, n int) ([]byte, error)
	Worktrees() ([]byte, error)
	Plan(name string) ([]byte, error)                // plan status [name] --json; ErrUnavailable when this build has no plans
	Commits(ids []string) (map[string]string, error) // fact id -> the ledger commit that introduced it
	Head() (string, error)                           // the ledger's head commit ("" before init)
}

// ErrUnavailable is a view this build cannot answer.
var ErrUnavailable = errors.New("not available in this build")

// CommandError is a command that failed with its --json error object
// on stdout: the API passes the object on.
type CommandError struct {
	Exit int
	JSON []byte
	Msg  string
}

func (e *CommandError) Error() string { return e.Msg }

// Reviewer is what the page needs to show each agent's work and carry a
// person's review back to it (SPEC §16). A Source that is not one gives a
// page without the work section.
type Reviewer interface {
	// Diff answers GET /api/diff: a rally/* branch against its base,
	// {"branch", "base", "revision", "files", "diff", "conflicts"}.
	Diff(branch string) ([]byte, error)
	// Branches stamps the rally/* branches: a string that changes when
	// one moves, read without starting a process.
	Branches() (string, error)
	// Capture is the last lines of a live session's terminal, sanitized.
	Capture(session string, lines int) ([]string, error)
	// Handoff records (and delivers, as the handoff command does) a
	// handoff authored by the server's identity and answers that
	// command's JSON.
	Handoff(h HandoffRequest) ([]byte, error)
}

// BranchMover is a Reviewer told when the rally/* branches moved (and
// once at the start): serve predicts their merges then, for commits made
// without rally's post-commit hook.
type BranchMover interface {
	BranchesMoved()
}

// HandoffRequest is POST /api/handoff: the handoff command's fields.
type HandoffRequest struct {
	Target   string   `json:"target"`
	Subject  string   `json:"subject"`
	Body     string   `json:"body"`
	Files    []string `json:"files"`
	Revision string   `json:"revision"`
}

// Options configure a Server.
type Options struct {
	Source  Source
	Runner  Runner           // set instead of Source: the scenario runner of demo --serve
	Watcher Watcher          // nil: a PollWatcher on Source.Head
	Now     func() time.Time // nil: time.Now
	Token   string           // "": a random one
	// Tool is the identity a review is sent as; "" makes the page
	// read-only, and ReadOnlyWhy says why. ReadOnly offers no write at
	// all (serve --read-only).
	Tool        string
	ReadOnly    bool
	ReadOnlyWhy string
	// CSRF is the page's anti-forgery token; "": a random one.
	CSRF string
}

// CheckAddr accepts only a loopback host with a port: 127.0.0.0/8, ::1 or
// localhost.
func CheckAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: want host:port on loopback, such as 127.0.0.1:8377", addr)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("--addr %q: the port is not a number from 0 to 65535", addr)
	}
	if host == "localhost" {
		return nil
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.IsLoopback() {
		return fmt.Errorf("--addr %q: serve listens on loopback only (127.0.0.1, ::1 or localhost), never on a network", addr)
	}
	return nil
}

// NewToken is 128 random bits in hex.
func NewToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// Runner plays the demo scenario for the choices in q (the flags of
// `git rally demo`, by name) and answers with `demo --json`.
type Runner interface {
	Demo(q url.Values) ([]byte, error)
}

// Watcher tells when the ledger moves: Changes sends the new head each
// time it changes, until ctx ends. serve uses the ledger's own watcher
// (ledger.Watcher, through WaitWatcher); PollWatcher is the plain fallback.
type Watcher interface {
	Changes(ctx context.Context) <-chan string
}

// PollWatcher reads the head every Interval: one small ref read, for the
// whole server, however many pages are open.
type PollWatcher struct {
	Head     func() (string, error)
	Interval time.Duration
}

func (p *PollWatcher) Changes(ctx context.Context) <-chan string {
	ch := make(chan string)
	go func() {
		defer close(ch)
		last, _ := p.Head()
		t := time.NewTicker(p.Interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			h, err := p.Head()
			if err != nil || h == last {
				continue
			}
			last = h
			select {
			case ch <- h:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch
}

// HeadWaiter blocks until the ledger head is not since and returns the
// new head: ledger.Watcher, the ledger watcher `watch` uses.
type HeadWaiter interface {
	Wait(ctx context.Context, since string) (string, error)
}

// WaitWatcher turns a HeadWaiter into a Watcher.
type WaitWatcher struct {
	W    HeadWaiter
	Head func() (string, error)
}

func (w *WaitWatcher) Changes(ctx context.Context) <-chan string {
	ch := make(chan string)
	go func() {
		defer close(ch)
		head, _ := w.Head()
		for {
			next, err := w.W.Wait(ctx, head)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				// A failed read (a ref being rewritten): look again soon.
				select {
				case <-ctx.Done():
					return
				case <-time.After(200 * time.Millisecond):
				}
				continue
			}
			head = next
			select {
			case ch <- head:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch
}
