package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"
	"github.com/tidwall/pretty"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"github.com/git-rally/git-rally/facts"
)

// factory is cmdutil's Factory with what only the cobra tree needs: the
// colour and pager flags, and the JSON output.
type factory struct {
	*cmdutil.Factory

	color        colorValue // --color
	colorDecided bool
	colorUse     bool
	noPager      bool // --no-pager
}

func newFactory(in io.Reader, out, err io.Writer) *factory {
	return &factory{Factory: cmdutil.New(in, out, err)}
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
		return writeIndented(f.Out, v)
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
		fmt.Fprintln(f.Out, res.String())
		return nil
	}
	// An object or array picked out of the indented document keeps its
	// old depth; indent it as --json would print it on its own. What
	// gjson builds (a multipath {a,b}, a #(...)# list) is one compact
	// line, and scripts match it as such.
	var ind bytes.Buffer
	if strings.Contains(res.Raw, "\n") && json.Indent(&ind, []byte(res.Raw), "", "  ") == nil {
		fmt.Fprintln(f.Out, ind.String())
		return nil
	}
	fmt.Fprintln(f.Out, res.Raw)
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
		fmt.Fprintf(f.Out, "%s %s\n", fa.ID, facts.Sanitize(fa.Summary(), 300))
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
	f.Forget()
	var nc *facts.NoChange
	if errors.As(err, &nc) {
		// Already in effect: nothing written, and that is success.
		fmt.Fprintf(f.Err, "git-rally: note: %s\n", nc.Msg)
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

func (v *toolsValue) String() string { return v.f.ToolFlag }
func (v *toolsValue) Type() string   { return "string" }
func (v *toolsValue) Set(s string) error {
	v.f.ToolFlag = s
	v.f.ToolList = append(v.f.ToolList, s)
	return nil
}

func (f *factory) tools() []string { return f.ToolList }

func secs(n int64) time.Duration { return time.Duration(n) * time.Second }

// Asker is Identity for reading commands (inbox, next, check, room
// --compact): the room is read from someone's point of view, and the
// error asks who is asking, not who is writing.
func (f *factory) Asker() (facts.Owner, error) {
	o, err := f.Identity()
	var ue *usageError
	if errors.As(err, &ue) && ue.Code == "no-identity" {
		return o, &usageError{Code: ue.Code, Msg: "no identity: who is asking? (this view is read for one tool)",
			Hint: "pass --tool <name> (for example --tool codex:verify-1), or export RALLY_TOOL, or git config rally.tool <name>"}
	}
	return o, err
}
