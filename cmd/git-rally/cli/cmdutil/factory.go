// Package cmdutil is what git-rally's commands share: the factory (the
// streams, the clock, the repository, the ledger, the caller's identity),
// the errors that carry exit codes and the one place they become text
// (Classify, Finish), the JSON output flags, and colour. The commands
// themselves are in package cli, one file each.
package cmdutil

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/hooks"
	"github.com/git-rally/git-rally/ledger"
	"github.com/git-rally/git-rally/refs"
	"github.com/git-rally/git-rally/worktree"
)

// UsageError is bad input: exit 2, nothing written. The command line's
// usage errors and the libraries' are one type.
type UsageError = facts.UsageError

// ExitError carries an exit code with no message (check --strict, a
// hook's denial).
type ExitError struct{ Code int }

// Error names the exit code.
func (e *ExitError) Error() string { return fmt.Sprintf("exit %d", e.Code) }

// AnsweredError is a failure whose answer is already on stdout (doctor's
// result with "ok": false): its message goes to stderr and its exit code
// is Err's, but --json prints no second document (SPEC §7).
type AnsweredError struct{ Err error }

func (e *AnsweredError) Error() string { return e.Err.Error() }

// Unwrap is Err, which decides the exit code.
func (e *AnsweredError) Unwrap() error { return e.Err }

// Factory gives commands what they share: the streams, the repository,
// the ledger, the clock and the caller's identity. Everything is opened
// lazily so a command pays only for what it uses.
type Factory struct {
	In       io.Reader
	Out, Err io.Writer
	ToolFlag string   // the last --tool
	ToolList []string // every --tool, for commands that take several
	// PrintJSON prints v as --json and --query ask (j); New's prints
	// indented JSON and ignores a query, the cobra tree's selects.
	PrintJSON              func(j *JSONFlags, v any) error
	Color                  ColorValue // --color
	colorDecided, colorUse bool

	repo    *worktree.Repo
	repoDir string       // the directory repo was discovered from
	cfg     *refs.Config // the repository's git configuration, read once
	ledger  *ledger.Ledger
	state   *facts.State
	now     *time.Time
	self    string // the tool Identity resolved
}

// New returns a Factory on the given streams.
func New(in io.Reader, out, err io.Writer) *Factory {
	f := &Factory{In: in, Out: out, Err: err}
	f.PrintJSON = func(_ *JSONFlags, v any) error {
		buf, err := IndentedJSON(v)
		if err != nil {
			return err
		}
		_, err = f.Out.Write(buf.Bytes())
		return err
	}
	return f
}

// Close closes the ledger, if it was opened.
func (f *Factory) Close() {
	if f.ledger != nil {
		f.ledger.Close()
	}
}

// Warnings are what the ledger had to say while the command ran.
func (f *Factory) Warnings() []string {
	if f.ledger == nil {
		return nil
	}
	return f.ledger.Warnings
}

// Opened is the ledger if it was opened, else nil.
func (f *Factory) Opened() *ledger.Ledger { return f.ledger }

// Forget drops the projection State read: the ledger moved.
func (f *Factory) Forget() { f.state = nil }

// ForgetLedger drops the ledger and its projection (deinit removed it).
func (f *Factory) ForgetLedger() { f.ledger, f.state = nil, nil }

// ResetCall readies a long-lived Factory (the MCP server's) for its next
// call: a fresh clock, projection and identity flags, no warnings.
func (f *Factory) ResetCall() {
	f.now, f.state, f.ToolFlag, f.ToolList = nil, nil, "", nil
	if f.ledger != nil {
		f.ledger.Warnings = nil
	}
}

// Now is RALLY_NOW when set, else the clock.
func (f *Factory) Now() (time.Time, error) {
	if f.now != nil {
		return *f.now, nil
	}
	t := time.Now().UTC()
	if v := os.Getenv("RALLY_NOW"); v != "" {
		p, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return time.Time{}, &UsageError{Msg: fmt.Sprintf("RALLY_NOW=%q is not an RFC 3339 time", v), Hint: "RALLY_NOW=2026-01-02T15:04:05Z"}
		}
		t = p.UTC()
		// git refuses commit dates before 1970 (fsck's badDateOverflow),
		// so a remote with receive.fsckObjects would refuse the ledger.
		if t.Year() < 1970 || t.Year() > 9999 {
			return time.Time{}, &UsageError{Msg: fmt.Sprintf("RALLY_NOW=%q is outside 1970-9999", v), Hint: "RALLY_NOW=2026-01-02T15:04:05Z"}
		}
	}
	f.now = &t
	return t, nil
}

// MustNow is Now, the zero time on a bad RALLY_NOW (which Ledger reports).
func (f *Factory) MustNow() time.Time {
	t, _ := f.Now()
	return t
}

// Repo discovers the repository from the current directory.
func (f *Factory) Repo() (*worktree.Repo, error) {
	if f.repo != nil {
		return f.repo, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	return f.repoAt(wd, true)
}

// RepoAt is the repository holding dir: the command's (Repo), discovered
// once, when dir is where it was or would be discovered from; another
// directory's is discovered each time.
func (f *Factory) RepoAt(dir string) (*worktree.Repo, error) { return f.repoAt(dir, false) }

// repoAt is RepoAt; isWd says dir is the current directory, just read.
func (f *Factory) repoAt(dir string, isWd bool) (*worktree.Repo, error) {
	if f.repo != nil && dir == f.repoDir {
		return f.repo, nil
	}
	r, err := worktree.Discover(dir)
	if err != nil {
		return nil, err
	}
	if f.repo == nil {
		if !isWd {
			wd, err := os.Getwd()
			isWd = err == nil && wd == dir
		}
		if isWd {
			f.repo, f.repoDir = r, dir
		}
	}
	return r, nil
}

// LedgerOf is the command's ledger (Ledger) when r is its repository
// and the clock is good; else nil and no error: the caller opens r's.
func (f *Factory) LedgerOf(r *worktree.Repo) (*ledger.Ledger, error) {
	if r != f.repo {
		return nil, nil
	}
	if _, err := f.Now(); err != nil {
		return nil, nil
	}
	return f.Ledger()
}

// Config returns the repository's git configuration, read once.
func (f *Factory) Config(r *worktree.Repo) *refs.Config {
	if f.cfg == nil {
		f.cfg = refs.ReadConfigWith(r.CommonDir, r.GitDir, r.Config())
	}
	return f.cfg
}

// Ledger opens the room's ledger.
func (f *Factory) Ledger() (*ledger.Ledger, error) {
	if f.ledger != nil {
		return f.ledger, nil
	}
	if _, err := f.Now(); err != nil {
		return nil, err
	}
	r, err := f.Repo()
	if err != nil {
		return nil, err
	}
	l, err := ledger.OpenConfig(r.CommonDir, f.MustNow, f.Config(r))
	if err != nil {
		return nil, err
	}
	l.AutoPack = os.Getenv("RALLY_AUTOPACK") != "0"
	f.ledger = l
	return l, nil
}

// State reads the current projection, once per command: identity
// resolution and the command itself share it. An append forgets it.
func (f *Factory) State() (*facts.State, error) {
	if f.state != nil {
		return f.state, nil
	}
	l, err := f.Ledger()
	if err != nil {
		return nil, err
	}
	st, err := l.View()
	if err == nil {
		f.state = st
	}
	return st, err
}

// PathContext resolves path arguments against the current worktree.
func (f *Factory) PathContext() (facts.PathContext, error) {
	r, err := f.Repo()
	if err != nil {
		return facts.PathContext{}, err
	}
	wd, _ := os.Getwd()
	if real, err := r.RealDir(wd); err == nil {
		wd = real
	}
	return facts.PathContext{Root: r.WorkTree, Cwd: wd, RootIsReal: r.WorkTreeIsReal()}, nil
}

// Identity resolves the author: --tool, $RALLY_TOOL, git config rally.tool,
// then the session bound to the current rally worktree. $RALLY_SESSION
// sets the session.
func (f *Factory) Identity() (facts.Owner, error) {
	o := facts.Owner{Tool: f.ToolFlag, Session: os.Getenv("RALLY_SESSION")}
	if o.Tool == "" {
		o.Tool = os.Getenv("RALLY_TOOL")
	}
	if o.Tool == "" {
		o.Tool = hooks.HostTool(os.Getenv) // inside an agent host's shell: its hooks' identity
	}
	var bound *facts.Fact
	if r, err := f.Repo(); err == nil {
		if name := worktree.SessionName(r); name != "" {
			if st, err := f.State(); err == nil {
				bound = st.Sessions[name]
			}
			if o.Session == "" {
				o.Session = name
			}
		}
		if o.Tool == "" {
			// In-process: a git process costs more than the append.
			// git follows includeIf; when the files hold one, ask it.
			if cfg := f.Config(r); !cfg.Conditional() {
				o.Tool = strings.TrimSpace(cfg.Get("rally.tool"))
			} else if v, err := refs.Git(r.Dir(), nil, "config", "--get", "rally.tool"); err == nil {
				o.Tool = strings.TrimSpace(v)
			}
		}
	}
	if o.Tool == "" && bound != nil {
		o.Tool = bound.Tool
	}
	if o.Tool == "" {
		return o, &UsageError{Code: "no-identity", Msg: "no identity: who is writing?",
			Hint: "pass --tool <name> (for example --tool claude_code:impl-1), or export RALLY_TOOL, or git config rally.tool <name>"}
	}
	if err := facts.CheckTool(o.Tool); err != nil {
		return o, err
	}
	if o.Session != "" {
		if err := facts.CheckSession(o.Session); err != nil {
			return o, err
		}
	}
	f.self = o.Tool
	return o, nil
}

// Asker is Identity for reading commands (inbox, next, check, room
// --compact): the room is read from someone's point of view, and the
// error asks who is asking, not who is writing.
func (f *Factory) Asker() (facts.Owner, error) {
	o, err := f.Identity()
	var ue *UsageError
	if errors.As(err, &ue) && ue.Code == "no-identity" {
		return o, &UsageError{Code: ue.Code, Msg: "no identity: who is asking? (this view is read for one tool)",
			Hint: "pass --tool <name> (for example --tool codex:verify-1), or export RALLY_TOOL, or git config rally.tool <name>"}
	}
	return o, err
}

// verifier returns the ledger's Verifier, nil when no signing or
// allowed-signers file is configured (then no output carries verdicts).
func (f *Factory) Verifier() (*ledger.Verifier, error) {
	l, err := f.Ledger()
	if err != nil {
		return nil, err
	}
	return l.Verifier()
}
