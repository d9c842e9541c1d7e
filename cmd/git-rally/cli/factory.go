package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"
	"github.com/tidwall/pretty"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/hooks"
	"github.com/git-rally/git-rally/refs"
	"github.com/git-rally/git-rally/worktree"
)

// factory gives commands what they share: the streams, the repository, the
// ledger, the clock and the caller's identity. Everything is opened lazily
// so a command pays only for what it uses.
type factory struct {
	in       io.Reader
	out, err io.Writer
	toolFlag string   // the last --tool
	toolList []string // every --tool, for commands that take several

	color        colorValue // --color
	colorDecided bool
	colorUse     bool
	noPager      bool // --no-pager

	repo   *worktree.Repo
	cfg    *refs.Config // the repository's git configuration, read once
	ledger *facts.Ledger
	state  *facts.State
	now    *time.Time
	self   string // the tool Identity resolved
}

func newFactory(in io.Reader, out, err io.Writer) *factory {
	return &factory{in: in, out: out, err: err}
}

func (f *factory) close() {
	if f.ledger != nil {
		f.ledger.Close()
	}
}

func (f *factory) warnings() []string {
	if f.ledger == nil {
		return nil
	}
	return f.ledger.Warnings
}

// Now is RALLY_NOW when set, else the clock.
func (f *factory) Now() (time.Time, error) {
	if f.now != nil {
		return *f.now, nil
	}
	t := time.Now().UTC()
	if v := os.Getenv("RALLY_NOW"); v != "" {
		p, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return time.Time{}, &usageError{msg: fmt.Sprintf("RALLY_NOW=%q is not an RFC 3339 time", v), hint: "RALLY_NOW=2026-01-02T15:04:05Z"}
		}
		t = p.UTC()
	}
	f.now = &t
	return t, nil
}

func (f *factory) mustNow() time.Time {
	t, _ := f.Now()
	return t
}

// Repo discovers the repository from the current directory.
func (f *factory) Repo() (*worktree.Repo, error) {
	if f.repo != nil {
		return f.repo, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	r, err := worktree.Discover(wd)
	if err != nil {
		return nil, err
	}
	f.repo = r
	return r, nil
}

// config returns the repository's git configuration, read once.
func (f *factory) config(r *worktree.Repo) *refs.Config {
	if f.cfg == nil {
		f.cfg = refs.ReadConfigWith(r.CommonDir, r.GitDir, r.Config())
	}
	return f.cfg
}

// Ledger opens the room's ledger.
func (f *factory) Ledger() (*facts.Ledger, error) {
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
	l, err := facts.OpenConfig(r.CommonDir, f.mustNow, f.config(r))
	if err != nil {
		return nil, err
	}
	l.AutoPack = os.Getenv("RALLY_AUTOPACK") != "0"
	switch {
	case f.self != "":
		l.Self = f.self
	case f.toolFlag != "":
		l.Self = f.toolFlag
	default:
		l.Self = os.Getenv("RALLY_TOOL")
	}
	f.ledger = l
	return l, nil
}

// State reads the current projection, once per command: identity
// resolution and the command itself share it. appendFacts forgets it.
func (f *factory) State() (*facts.State, error) {
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
func (f *factory) PathContext() (facts.PathContext, error) {
	r, err := f.Repo()
	if err != nil {
		return facts.PathContext{}, err
	}
	wd, _ := os.Getwd()
	if real, err := filepath.EvalSymlinks(wd); err == nil {
		wd = real
	}
	return facts.PathContext{Root: r.WorkTree, Cwd: wd}, nil
}

// Identity resolves the author: --tool, $RALLY_TOOL, git config rally.tool,
// then the session bound to the current rally worktree. $RALLY_SESSION
// sets the session.
func (f *factory) Identity() (facts.Owner, error) {
	o := facts.Owner{Tool: f.toolFlag, Session: os.Getenv("RALLY_SESSION")}
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
			if cfg := f.config(r); !cfg.Conditional() {
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
		return o, &usageError{code: "no-identity", msg: "no identity: who is writing?",
			hint: "pass --tool <name> (for example --tool claude_code:impl-1), or export RALLY_TOOL, or git config rally.tool <name>"}
	}
	if err := facts.CheckTool(o.Tool); err != nil {
		return o, err
	}
	f.self = o.Tool
	if f.ledger != nil && f.ledger.Self != o.Tool {
		f.ledger.Self, f.state = o.Tool, nil // the view under rally.requireSigned is the caller's
	}
	return o, nil
}

// jsonFlags are the output flags of every reading command.
type jsonFlags struct {
	json  bool
	query string
}

func addJSONFlags(c *cobra.Command, j *jsonFlags) {
	c.Flags().BoolVar(&j.json, "json", false, "print JSON")
	c.Flags().StringVar(&j.query, "query", "", "print only this gjson path of the JSON (implies --json)")
}

func (j *jsonFlags) on() bool { return j.json || j.query != "" }

// indentedJSON encodes v as encoding/json's Encoder does with
// SetIndent("", "  ") and no HTML escaping, byte for byte: compact, then
// indented by tidwall/pretty, which indents twice as fast as json.Indent
// (a room of 1,600 claims is 600 KB). Width 1 keeps every non-empty
// array and object on lines of their own, as json.Indent does.
func indentedJSON(v any) (*bytes.Buffer, error) {
	var compact bytes.Buffer
	enc := json.NewEncoder(&compact)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.NewBuffer(pretty.PrettyOptions(bytes.TrimSuffix(compact.Bytes(), []byte("\n")), jsonIndent)), nil
}

var jsonIndent = &pretty.Options{Width: 1, Indent: "  "}

// printJSON writes v as indented JSON, or the part --query selects.
func (f *factory) printJSON(j *jsonFlags, v any) error {
	if j.query == "" {
		return writeIndented(f.out, v)
	}
	buf, err := encodeIndented(v)
	if err != nil {
		return err
	}
	if !gjson.ValidBytes(buf.Bytes()) {
		return fmt.Errorf("internal: invalid JSON output")
	}
	res := gjson.GetBytes(buf.Bytes(), j.query)
	if !res.Exists() {
		return nil
	}
	if res.Type == gjson.String {
		fmt.Fprintln(f.out, res.String())
		return nil
	}
	// An object or array picked out of the indented document keeps its
	// old depth; indent it as --json would print it on its own. What
	// gjson builds (a multipath {a,b}, a #(...)# list) is one compact
	// line, and scripts match it as such.
	var ind bytes.Buffer
	if strings.Contains(res.Raw, "\n") && json.Indent(&ind, []byte(res.Raw), "", "  ") == nil {
		fmt.Fprintln(f.out, ind.String())
		return nil
	}
	fmt.Fprintln(f.out, res.Raw)
	return nil
}

// rawFacts turns facts into their stored JSON, unknown keys included.
func rawFacts(fs []*facts.Fact) []json.RawMessage {
	out := make([]json.RawMessage, len(fs))
	for i, fa := range fs {
		raw := fa.Raw
		if len(raw) == 0 {
			raw = fa.Encode()
		}
		out[i] = json.RawMessage(bytes.TrimSpace(raw))
	}
	return out
}

// writeResult prints what an append wrote: the facts as JSON, or a line
// each for people.
func (f *factory) writeResult(j *jsonFlags, fs []*facts.Fact) error {
	if j.on() {
		return f.printJSON(j, map[string]any{"facts": rawFacts(fs)})
	}
	for _, fa := range fs {
		fmt.Fprintf(f.out, "%s %s\n", fa.ID, facts.Sanitize(fa.Summary(), 300))
	}
	return nil
}

// appendFacts runs an append and prints the result.
func (f *factory) appendFacts(j *jsonFlags, fn facts.AppendFunc) ([]*facts.Fact, error) {
	l, err := f.Ledger()
	if err != nil {
		return nil, err
	}
	fs, err := l.Append(fn)
	f.state = nil
	var nc *facts.NoChange
	if errors.As(err, &nc) {
		// Already in effect: nothing written, and that is success.
		fmt.Fprintf(f.err, "git-rally: note: %s\n", nc.Msg)
		if j.on() {
			return nil, f.writeResult(j, nil)
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return fs, f.writeResult(j, fs)
}

// toolsValue collects repeated --tool flags.
type toolsValue struct{ f *factory }

func (v *toolsValue) String() string { return v.f.toolFlag }
func (v *toolsValue) Type() string   { return "string" }
func (v *toolsValue) Set(s string) error {
	v.f.toolFlag = s
	v.f.toolList = append(v.f.toolList, s)
	return nil
}

func (f *factory) tools() []string { return f.toolList }

func secs(n int64) time.Duration { return time.Duration(n) * time.Second }

// Asker is Identity for reading commands (inbox, next, check, room
// --compact): the room is read from someone's point of view, and the
// error asks who is asking, not who is writing.
func (f *factory) Asker() (facts.Owner, error) {
	o, err := f.Identity()
	var ue *usageError
	if errors.As(err, &ue) && ue.code == "no-identity" {
		return o, &usageError{code: ue.code, msg: "no identity: who is asking? (this view is read for one tool)",
			hint: "pass --tool <name> (for example --tool codex:verify-1), or export RALLY_TOOL, or git config rally.tool <name>"}
	}
	return o, err
}
