package cmdutil

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/pretty"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
	"github.com/git-rally/git-rally/worktree"
)

// Usagef is a UsageError with a formatted message.
func Usagef(format string, a ...any) error { return &UsageError{Msg: fmt.Sprintf(format, a...)} }

// Finish ends a command as every git-rally command ends: the ledger
// closed, its warnings, and err as text and an exit code on stderr (and,
// under --json, as {"error": ...} on stdout).
func (f *Factory) Finish(args []string, err error) int {
	f.Close()
	defer func() {
		if err != nil {
			code, msg, hint := Classify(err)
			f.PrintErrorJSON(args, err, code, msg, hint)
		}
	}()
	for _, w := range f.Warnings() {
		fmt.Fprintf(f.Err, "git-rally: warning: %s\n", w)
	}
	if err == nil {
		return ExitOK
	}
	code, msg, hint := Classify(err)
	if msg != "" {
		fmt.Fprintf(f.Err, "git-rally: error: %s\n", LocalizeTimes(msg, time.Local))
	}
	for _, h := range strings.Split(hint, "\n") {
		if h != "" {
			fmt.Fprintf(f.Err, "git-rally: hint: %s\n", LocalizeTimes(h, time.Local))
		}
	}
	return code
}

// Exit codes.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
	ExitRefused = 3
	ExitStop    = 4
)

func Classify(err error) (int, string, string) {
	var (
		ue *UsageError
		fu *facts.UsageError
		nf *facts.NotFoundError
		re *facts.RefusedError
		ce *facts.ConflictError
		ee *ExitError
		ge *refs.GitError
		fe *facts.FailedError
		le *refs.LockedError
		ke *refs.KeyError
	)
	switch {
	case errors.As(err, &ee):
		return ee.Code, "", ""
	case errors.As(err, &ue):
		return ExitUsage, ue.Msg, ue.Hint
	case errors.As(err, &ke):
		return ExitUsage, ke.Msg, ke.Hint
	case errors.As(err, &fu):
		return ExitUsage, fu.Msg, fu.Hint
	case errors.As(err, &nf):
		return ExitUsage, nf.Error(), "git rally log --json"
	case errors.As(err, &ce):
		return ExitRefused, ce.Error(), ce.Hint
	case errors.As(err, &re):
		return ExitRefused, re.Msg, re.Hint
	case errors.Is(err, worktree.ErrNotRepo):
		return ExitFailure, err.Error(), "run git rally inside a git repository, or `git init` one"
	case errors.As(err, &fe):
		return ExitFailure, err.Error(), fe.Hint
	case errors.As(err, &le):
		return ExitFailure, le.Error(), le.Hint()
	case errors.As(err, &ge):
		return ExitFailure, err.Error(), ""
	}
	msg := err.Error()
	if strings.HasPrefix(msg, "unknown command ") {
		return RootUnknown(msg)
	}
	if IsCobraUsage(msg) {
		return ExitUsage, msg, "git rally help"
	}
	return ExitFailure, msg, ""
}

func IsCobraUsage(msg string) bool {
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "accepts ", "requires at least",
		"requires exactly", "flag needs an argument", "invalid argument", "required flag", "if any flags in the group", "at least one of the flags in the group", "none of the others can be"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// rootUnknown rewrites cobra's multi-line error for an unknown top-level
// command ("unknown command "x" for "git-rally"\n\nDid you mean this?\n\ty")
// into one error line and a hint.
func RootUnknown(msg string) (int, string, string) {
	first, rest, _ := strings.Cut(msg, "\n")
	first = strings.Replace(first, `for "git-rally"`, `for "git rally"`, 1)
	var sugg []string
	for _, l := range strings.Split(rest, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "Did you mean") {
			sugg = append(sugg, l)
		}
	}
	if len(sugg) == 0 {
		return ExitUsage, first, "git rally help"
	}
	return ExitUsage, fmt.Sprintf("%s; did you mean %q?", first, sugg[0]), "git rally " + sugg[0]
}

type errorJSON struct {
	Exit      int            `json:"exit"`
	Code      string         `json:"code"`
	Message   string         `json:"message"`
	Hints     []string       `json:"hints"`
	Conflicts []conflictJSON `json:"conflicts,omitempty"`
}

type conflictJSON struct {
	Owner      string `json:"owner"`
	Scope      string `json:"scope"`
	Claim      string `json:"claim"`
	OwnerState string `json:"owner_state"`
	LastSeen   string `json:"last_seen,omitempty"`
	TakeoverAt string `json:"takeover_at,omitempty"`
}

// errorCode is the stable kebab-case name of a failure.
func ErrorCode(err error) string {
	var (
		ue *UsageError
		re *facts.RefusedError
		ce *facts.ConflictError
		nf *facts.NotFoundError
		fu *facts.UsageError
		ee *ExitError
	)
	switch {
	case errors.As(err, &ee):
		return "strict-stop"
	case errors.As(err, &ce):
		return "claim-conflict"
	case errors.As(err, &re):
		if re.Code != "" {
			return re.Code
		}
		return "refused"
	case errors.As(err, &ue):
		if ue.Code != "" {
			return ue.Code
		}
		return "usage"
	case errors.As(err, &nf):
		return "not-found"
	case errors.As(err, &fu):
		return "usage"
	case errors.Is(err, worktree.ErrNotRepo):
		return "not-a-repository"
	}
	if strings.HasPrefix(err.Error(), "unknown command ") {
		return "unknown-command"
	}
	if IsCobraUsage(err.Error()) {
		return "usage"
	}
	return "error"
}

// printErrorJSON prints the error object when the command line asked for
// JSON. A --query applies to it too (--query error.code).
func (f *Factory) PrintErrorJSON(args []string, err error, code int, msg, hint string) {
	j := JSONFromArgs(args)
	var ee *ExitError
	if !j.On() || errors.As(err, &ee) || (j.Query != "" && ValidQuery(j.Query) != nil) {
		return
	}
	e := errorJSON{Exit: code, Code: ErrorCode(err), Message: facts.Sanitize(msg, 2000), Hints: []string{}}
	for _, h := range strings.Split(hint, "\n") {
		if h != "" {
			e.Hints = append(e.Hints, facts.Sanitize(h, 2000))
		}
	}
	var ce *facts.ConflictError
	if errors.As(err, &ce) {
		all := ce.All
		if len(all) == 0 {
			all = []*facts.ConflictError{ce}
		}
		for _, c := range all {
			cj := conflictJSON{Owner: c.Owner.String(), Scope: c.Scope, Claim: c.ClaimID, OwnerState: c.State}
			if !c.LastSeen.IsZero() {
				cj.LastSeen = facts.FormatTime(c.LastSeen)
				cj.TakeoverAt = facts.FormatTime(c.TakeoverAt)
			}
			e.Conflicts = append(e.Conflicts, cj)
		}
	}
	f.PrintJSON(&j, map[string]any{"error": e})
}

// jsonFromArgs reads --json and --query from the raw arguments, so the
// error object is printed even when flag parsing is what failed.
func JSONFromArgs(args []string) JSONFlags {
	var j JSONFlags
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return j
		case a == "--json" || a == "--json=true":
			j.JSON = true
		case a == "--query" && i+1 < len(args):
			j.Query = args[i+1]
			i++
		case strings.HasPrefix(a, "--query="):
			j.Query = strings.TrimPrefix(a, "--query=")
		}
	}
	return j
}

// validQuery checks what gjson cannot tell from a miss: brackets, braces
// and parentheses that close in order, quotes that end, no trailing
// escape. gjson answers a broken path with "nothing", which would pass
// for an empty result.
func ValidQuery(q string) error {
	bad := func(why string) error {
		return &UsageError{Code: "bad-query", Msg: "bad --query " + quote(q) + ": " + why,
			Hint: "a gjson path: --query claims.0.id, --query 'claims.#(tool==\"a\").id', --query 'handoffs.#'"}
	}
	var stack []byte
	inStr := false
	for i := 0; i < len(q); i++ {
		ch := q[i]
		if ch == '\\' {
			if i+1 == len(q) {
				return bad("it ends in a backslash")
			}
			i++
			continue
		}
		if inStr {
			if ch == '"' {
				inStr = false
			}
			continue
		}
		switch ch {
		case '"':
			if len(stack) > 0 {
				inStr = true
			}
		case '(', '[', '{':
			stack = append(stack, ch)
		case ')', ']', '}':
			open := map[byte]byte{')': '(', ']': '[', '}': '{'}[ch]
			if len(stack) == 0 || stack[len(stack)-1] != open {
				return bad("unbalanced " + string(ch))
			}
			stack = stack[:len(stack)-1]
		}
	}
	if inStr {
		return bad("a quote does not end")
	}
	if len(stack) > 0 {
		return bad("unclosed " + string(stack[len(stack)-1]))
	}
	if strings.TrimSpace(q) == "" || strings.HasSuffix(q, ".") || strings.HasPrefix(q, ".") {
		return bad("an empty path segment")
	}
	_ = gjson.Get("{}", q) // must not panic on anything that passed
	return nil
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

// localTime renders a stored RFC 3339 time in loc ("2026-03-01 11:30
// CET"), or the text as it is when it does not parse.
func LocalTime(at string, loc *time.Location) string {
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return at
	}
	return t.In(loc).Format("2006-01-02 15:04 MST")
}

// storedTimeRE matches a time as facts store it (RFC 3339 UTC).
var storedTimeRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z\b`)
})

// localizeTimes rewrites the stored times in a message for people (an
// error, a hint, a suggestion's reason) into loc; JSON keeps them as
// they are.
func LocalizeTimes(s string, loc *time.Location) string {
	return storedTimeRE().ReplaceAllStringFunc(s, func(t string) string { return LocalTime(t, loc) })
}

// JSONFlags are the output flags of every reading command.
type JSONFlags struct {
	JSON  bool
	Query string
}

func (j *JSONFlags) On() bool { return j.JSON || j.Query != "" }

// indentedJSON encodes v as encoding/json's Encoder does with
// SetIndent("", "  ") and no HTML escaping, byte for byte: compact, then
// indented by tidwall/pretty, which indents twice as fast as json.Indent
// (a room of 1,600 claims is 600 KB). Width 1 keeps every non-empty
// array and object on lines of their own, as json.Indent does.
func IndentedJSON(v any) (*bytes.Buffer, error) {
	var compact bytes.Buffer
	enc := json.NewEncoder(&compact)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.NewBuffer(pretty.PrettyOptions(bytes.TrimSuffix(compact.Bytes(), []byte("\n")), jsonIndent)), nil
}

var jsonIndent = &pretty.Options{Width: 1, Indent: "  "}

// rawFacts turns facts into their stored JSON, unknown keys included.
func RawFacts(fs []*facts.Fact) []json.RawMessage {
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
func (f *Factory) WriteResult(j *JSONFlags, fs []*facts.Fact) error {
	if j.On() {
		return f.PrintJSON(j, map[string]any{"facts": RawFacts(fs)})
	}
	for _, fa := range fs {
		fmt.Fprintf(f.Out, "%s %s\n", fa.ID, facts.Sanitize(fa.Summary(), 300))
	}
	return nil
}

// appendFacts runs an append and prints the result.
func (f *Factory) AppendFacts(j *JSONFlags, fn facts.AppendFunc) ([]*facts.Fact, error) {
	l, err := f.Ledger()
	if err != nil {
		return nil, err
	}
	fs, err := l.Append(fn)
	f.Forget()
	var nc *facts.NoChange
	if errors.As(err, &nc) {
		// Already in effect: nothing written, and that is success.
		fmt.Fprintf(f.Err, "git-rally: note: %s\n", nc.Msg)
		if j.On() {
			return nil, f.WriteResult(j, nil)
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return fs, f.WriteResult(j, fs)
}

// ClaimOptions are claim's flags.
type ClaimOptions struct {
	Shared, Advisory, Takeover bool
	Lease                      string
	Subject                    string
	J                          JSONFlags
}

func Claim(f *Factory, opts *ClaimOptions, args []string) error {
	o, err := f.Identity()
	if err != nil {
		return err
	}
	scopes, err := ParseScopes(f, args)
	if err != nil {
		return err
	}
	var lease time.Duration
	if opts.Lease != "" {
		if lease, err = ParseDuration("--lease", opts.Lease); err != nil {
			return err
		}
	}
	if err := facts.CheckText("subject", opts.Subject, facts.MaxSubject); err != nil {
		return err
	}
	access := facts.Exclusive
	if opts.Shared {
		access = facts.Shared
	} else if opts.Advisory {
		access = facts.Advisory
	}
	_, err = f.AppendFacts(&opts.J, facts.Claim(facts.ClaimRequest{Owner: o, Scopes: scopes, Access: access,
		Lease: lease, Subject: opts.Subject, Takeover: opts.Takeover}))
	return err
}

func ParseScopes(f *Factory, args []string) ([]string, error) {
	pc, err := f.PathContext()
	if err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	for _, a := range args {
		s, err := facts.ParseScope(a, pc)
		if err != nil {
			return nil, err
		}
		if err := GlobHint(a, s, pc); err != nil {
			return nil, err
		}
		if !seen[s.String()] {
			seen[s.String()] = true
			out = append(out, s.String())
		}
	}
	return out, nil
}

// globHint refuses a plain path with pattern characters that names no
// file: claim 'src/*.ts' would hold one file literally named "*.ts" and
// leave every .ts file free. A typed scope (file:, glob:) says what it means.
func GlobHint(arg string, s facts.Scope, pc facts.PathContext) error {
	if (s.Kind != "file" && s.Kind != "dir") || strings.HasPrefix(arg, s.Kind+":") || !strings.ContainsAny(arg, "*?[") {
		return nil
	}
	if pc.Root != "" {
		if _, err := os.Lstat(filepath.Join(pc.Root, filepath.FromSlash(s.Value))); err == nil {
			return nil // a file with that very name
		}
	}
	return &UsageError{Msg: fmt.Sprintf("%q looks like a pattern, but a plain path is one literal file", arg),
		Hint: fmt.Sprintf("glob:%s for every path it matches, or file:%s for a file of that name", s.Value, s.Value)}
}

// parseDuration reads 90s, 45m, 3h, 2d or a Go duration; it must be
// positive and at most 30 days.
func ParseDuration(flag, v string) (time.Duration, error) {
	s := strings.TrimSpace(v)
	var d time.Duration
	var err error
	if strings.HasSuffix(s, "d") {
		var n int
		n, err = strconv.Atoi(strings.TrimSuffix(s, "d"))
		if n < 0 || n > 30 { // before the multiplication, which overflows
			n = -1
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		d, err = time.ParseDuration(s)
	}
	if err != nil || d <= 0 || d > 30*24*time.Hour {
		return 0, &UsageError{Msg: fmt.Sprintf("bad duration %s %q: want a positive time up to 30d, like 90s, 45m, 3h or 2d", flag, v)}
	}
	return d, nil
}
