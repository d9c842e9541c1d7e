package cmdutil

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/tidwall/pretty"

	"github.com/git-rally/git-rally/facts"
)

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

// On reports whether JSON is asked for.
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
