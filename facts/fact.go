package facts

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Kinds this version knows. Facts of other kinds are kept and shown.
const (
	KindPresence     = "presence"
	KindLeave        = "leave"
	KindClaim        = "claim"
	KindRelease      = "release"
	KindClaimExpired = "claim.expired"
	KindHandoff      = "handoff"
	KindReceipt      = "receipt"
	KindResolve      = "resolve"
	KindArtifact     = "artifact"
	KindRetract      = "retract"
	KindNote         = "note"
	KindBlocker      = "blocker"
	KindRisk         = "risk"
	KindDecision     = "decision"
	KindSession      = "session"
	KindDelivery     = "delivery"
	KindPlan         = "plan"   // a workstream: subject the plan id, body the plan (plan.go)
	KindLead         = "lead"   // the room's lead seat: target the new lead, none to empty it (lead.go)
	KindStatus       = "status" // what a peer is doing (activity.go)
)

// Kinds lists the known kinds.
var Kinds = []string{KindPresence, KindLeave, KindClaim, KindRelease, KindClaimExpired,
	KindHandoff, KindReceipt, KindResolve, KindArtifact, KindRetract, KindNote,
	KindBlocker, KindRisk, KindDecision, KindSession, KindDelivery, KindPlan, KindLead, KindStatus}

// Access modes.
const (
	Exclusive = "exclusive"
	Shared    = "shared"
	Advisory  = "advisory"
)

// SystemTool authors the facts rally writes on its own (reaping, sweeps).
const SystemTool = "rally"

// Size limits on text.
const (
	MaxSubject = 1 << 10
	MaxBody    = 64 << 10
)

// TimeFormat is RFC 3339 UTC with milliseconds.
const TimeFormat = "2006-01-02T15:04:05.000Z"

// Fact is one ledger line. Its JSON form is the wire format.
type Fact struct {
	V        int      `json:"v"`
	ID       string   `json:"id,omitempty"`
	Kind     string   `json:"kind"`
	Tool     string   `json:"tool,omitempty"`
	Session  string   `json:"session,omitempty"`
	At       string   `json:"at,omitempty"`
	Clock    int64    `json:"clock"`
	Ref      string   `json:"ref,omitempty"`
	Target   string   `json:"target,omitempty"`
	Scopes   []string `json:"scopes,omitempty"`
	Access   string   `json:"access,omitempty"`
	LeaseS   int64    `json:"lease_s,omitempty"`
	Subject  string   `json:"subject,omitempty"`
	Body     string   `json:"body,omitempty"`
	Files    []string `json:"files,omitempty"`
	Revision string   `json:"revision,omitempty"`
	Evidence []string `json:"evidence,omitempty"`
	URI      string   `json:"uri,omitempty"`
	AckBy    string   `json:"ack_by,omitempty"`
	Reason   string   `json:"reason,omitempty"`
	Severity string   `json:"severity,omitempty"`
	Status   string   `json:"status,omitempty"`
	// Session facts of rally worktrees.
	Name   string `json:"name,omitempty"`
	Path   string `json:"path,omitempty"`
	Branch string `json:"branch,omitempty"`
	Base   string `json:"base,omitempty"`
	// Managed sessions (§13): what runs it and where.
	Agent    string   `json:"agent,omitempty"`
	Backend  string   `json:"backend,omitempty"`
	Worktree string   `json:"worktree,omitempty"`
	Command  []string `json:"command,omitempty"`

	// Raw is the line as stored, unknown keys included.
	Raw []byte `json:"-"`
}

// Key orders facts: by clock, then id.
type Key struct {
	Clock int64  `json:"clock"`
	ID    string `json:"id"`
}

// Less orders keys.
func (k Key) Less(o Key) bool {
	if k.Clock != o.Clock {
		return k.Clock < o.Clock
	}
	return k.ID < o.ID
}

// Key returns the fact's ordering key.
func (f *Fact) Key() Key { return Key{f.Clock, f.ID} }

// Time parses At; a bad or missing time is the zero time.
func (f *Fact) Time() time.Time {
	if t, ok := parseTime(f.At); ok {
		return t
	}
	t, err := time.Parse(time.RFC3339Nano, f.At)
	if err != nil {
		return time.Time{}
	}
	return t
}

// Owner is who holds a claim: the tool plus the session.
type Owner struct {
	Tool    string `json:"tool"`
	Session string `json:"session,omitempty"`
}

func (o Owner) String() string {
	if o.Session == "" {
		return o.Tool
	}
	return o.Tool + "@" + o.Session
}

// Owner returns the fact's author as an owner.
func (f *Fact) Owner() Owner { return Owner{f.Tool, f.Session} }

// Encode returns the stored line: canonical JSON ending in a newline.
func (f *Fact) Encode() []byte {
	if tab := FastFields(); tab.ok {
		return append(AppendFact(make([]byte, 0, 256), f, tab), '\n')
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(f); err != nil {
		panic(err) // a Fact always encodes
	}
	return buf.Bytes()
}

// ComputeID returns the id of a stored line: f_ and 16 hex digits of the
// SHA-256 of its canonical content without the id. Canonical content is the
// JSON object re-encoded with sorted keys, so a fact from a newer version
// with keys this one does not know still gets a stable id.
func ComputeID(line []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return "", err
	}
	delete(m, "id")
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return "", err
	}
	sum := sha256.Sum256(buf.Bytes())
	return "f_" + hex.EncodeToString(sum[:8]), nil
}

// Seal sets the id from the content and fills Raw.
//
// The line is encoded once: its id comes from the fast canonical hash when
// the line is canonical (almost always; else ComputeID), and the id goes
// in right after "v", where Encode puts it.
func (f *Fact) Seal() {
	f.ID = ""
	line := f.Encode()
	var id string
	if g, ms, ok := FastDecode(line[:len(line)-1]); ok && g.ID == "" {
		id = FastID(line[:len(line)-1], &ms)
	} else {
		var err error
		if id, err = ComputeID(line); err != nil {
			panic(err)
		}
	}
	f.ID = id
	comma := bytes.IndexByte(line, ',') // after "v":N, the first member
	if comma < 0 || !bytes.HasPrefix(line, []byte(`{"v":`)) {
		f.Raw = f.Encode()
		return
	}
	raw := make([]byte, 0, len(line)+len(id)+8)
	raw = append(raw, line[:comma+1]...)
	raw = append(raw, `"id":"`...)
	raw = append(raw, id...)
	raw = append(raw, `",`...)
	f.Raw = append(raw, line[comma+1:]...)
}

// Parse reads one stored line.
func Parse(line []byte) (*Fact, error) {
	if f, ok := parseFast(line); ok {
		return f, nil
	}
	var f Fact
	if err := json.Unmarshal(line, &f); err != nil {
		return nil, fmt.Errorf("parsing fact: %w", err)
	}
	if f.ID == "" || f.Kind == "" {
		return nil, fmt.Errorf("parsing fact: missing id or kind")
	}
	f.Raw = append([]byte(nil), bytes.TrimRight(line, "\n")...)
	f.Raw = append(f.Raw, '\n')
	return &f, nil
}

// parseFast is Parse of a canonical line (fastjson.go).
func parseFast(line []byte) (*Fact, bool) {
	b := bytes.TrimRight(line, "\n")
	f, _, ok := FastDecode(b)
	if !ok || f.ID == "" || f.Kind == "" {
		return nil, false
	}
	f.Raw = append(make([]byte, 0, len(b)+1), b...)
	f.Raw = append(f.Raw, '\n')
	return f, true
}

// UsageError is bad input from the caller: exit 2, nothing written. It
// is the one usage error type: the command line's too (cmdutil.UsageError).
// Code, when set, is a stable kebab-case word for machines (no-identity).
type UsageError struct {
	Msg  string
	Hint string
	Code string
}

func (e *UsageError) Error() string { return e.Msg }

// RefusedError is a write refused by a rule: exit 3, nothing written.
// Code is a stable kebab-case word for machines (not-target, not-author).
type RefusedError struct {
	Msg  string
	Hint string
	Code string
}

func (e *RefusedError) Error() string { return e.Msg }

// FailedError is a failure (exit 1) that comes with advice on the next
// step: a git command that failed, a remote that refused a push.
type FailedError struct {
	Err  error
	Hint string
}

func (e *FailedError) Error() string { return e.Err.Error() }
func (e *FailedError) Unwrap() error { return e.Err }

func usagef(format string, a ...any) error { return &UsageError{Msg: fmt.Sprintf(format, a...)} }

// CheckText validates a one-line subject and a body.
func CheckText(field, s string, max int) error {
	if len(s) > max {
		return &UsageError{Msg: fmt.Sprintf("%s is %d bytes; the limit is %d", field, len(s), max),
			Hint: "put long text in --body (64 KiB) or in a file and link it with --uri"}
	}
	if !utf8.ValidString(s) {
		return usagef("%s is not valid UTF-8", field)
	}
	if field == "subject" && strings.ContainsAny(s, "\n\r") {
		return usagef("subject must be one line")
	}
	return nil
}

// Validate checks a fact about to be written.
func (f *Fact) Validate() error {
	if f.Tool == "" {
		return usagef("fact has no author")
	}
	if err := CheckTool(f.Tool); err != nil {
		return err
	}
	if f.Target != "" && f.Kind != KindSession { // a session's target is its terminal (a tmux pane)
		if err := CheckTool(f.Target); err != nil {
			return err
		}
	}
	if f.Session != "" {
		if err := CheckSession(f.Session); err != nil {
			return err
		}
	}
	for _, sc := range f.Scopes {
		if why := NonCanonical(sc); why != "" {
			return &UsageError{Msg: fmt.Sprintf("scope %q: %s", Sanitize(sc, 200), why)}
		}
	}
	if err := CheckText("subject", f.Subject, MaxSubject); err != nil {
		return err
	}
	if err := CheckText("body", f.Body, MaxBody); err != nil {
		return err
	}
	if f.Kind == KindStatus && (f.Status == "" || len(f.Status) > 40) {
		return usagef("a status fact needs an activity (at most 40 bytes)")
	}
	for _, s := range append(append([]string{f.Reason}, f.Evidence...), f.Files...) {
		if err := CheckText("text", s, MaxSubject*4); err != nil {
			return err
		}
	}
	return nil
}

// CheckTool validates a tool id (SPEC §2): 1-128 characters of letters,
// digits and _ . - + : /. Nothing a shell or a terminal reads specially
// (backticks, $, quotes, spaces, controls) is in it.
func CheckTool(t string) error {
	if !ValidID(t) {
		return &UsageError{Msg: fmt.Sprintf("bad tool id %q: want 1-128 letters, digits and _ . - + : /", Sanitize(t, 140)),
			Hint: "for example --tool claude_code:impl-1"}
	}
	return nil
}

// CheckSession validates a session id ($RALLY_SESSION) as a tool id.
func CheckSession(s string) error {
	if !ValidID(s) {
		return &UsageError{Msg: fmt.Sprintf("bad session id %q: want 1-128 letters, digits and _ . - + : /", Sanitize(s, 140))}
	}
	return nil
}

// ValidID reports whether s is 1-128 characters of [A-Za-z0-9_.+:/-]:
// a tool id, a target or a session id.
func ValidID(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '_' || c == '.' || c == '-' || c == '+' || c == ':' || c == '/') {
			return false
		}
	}
	return true
}

// Summary is a one-line human description, used as the commit message.
func (f *Fact) Summary() string {
	var b strings.Builder
	b.WriteString(f.Kind)
	switch {
	case f.Kind == KindReceipt && f.Status == Rejected:
		b.WriteString(" rejected: " + OneLine(f.Reason, 60))
	case f.Kind == KindStatus:
		b.WriteString(" " + OneLine(f.Status, 20))
	case len(f.Scopes) > 0:
		b.WriteString(" " + strings.Join(f.Scopes, " "))
	case f.Subject != "":
		b.WriteString(" " + OneLine(f.Subject, 60))
	}
	if f.Ref != "" {
		b.WriteString(" ref " + f.Ref)
	}
	if f.Target != "" {
		b.WriteString(" to " + f.Target)
	}
	b.WriteString(" by " + f.Tool)
	return b.String()
}

func OneLine(s string, max int) string {
	return CutWords(strings.Join(strings.Fields(s), " "), max)
}

// CutWords shortens s to at most about max bytes at a word boundary (a
// word longer than that is cut at a character boundary), marked "...".
func CutWords(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := strings.LastIndexByte(s[:max+1], ' ')
	if cut < max/2 {
		cut = max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
	}
	return strings.TrimRight(s[:cut], " ") + "..."
}

// FormatTime renders a time the way facts store it.
func FormatTime(t time.Time) string { return formatTime(t) }

// Sanitize makes text written by another agent safe to print: control
// characters, terminal escapes, Unicode bidi and other invisible format
// characters are removed, newlines folded, and the length capped at max
// bytes (0: no cap).
func Sanitize(s string, max int) string {
	if printableASCII(s) && (max <= 0 || len(s) <= max) {
		return s // nothing to remove, fold or cap: most subjects
	}
	if strings.IndexByte(s, 0x1b) >= 0 { // compiled only when there is an escape to remove
		s = ansiRE().ReplaceAllString(s, "")
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t' || r == '\r':
			b.WriteByte(' ')
		case isHidden(r): // controls, bidi and zero-width format characters
		default:
			b.WriteRune(r)
		}
	}
	out := b.String()
	if max > 0 && len(out) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(out[cut]) {
			cut--
		}
		out = out[:cut] + "...[truncated]"
	}
	return out
}

// ansiRE matches terminal escape sequences: CSI, OSC and two-byte escapes.
var ansiRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile("\x1b(\\[[0-?]*[ -/]*[@-~]|\\][^\x07\x1b]*(\x07|\x1b\\\\)?|[@-Z\\\\-_])")
})
