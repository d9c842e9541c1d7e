package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
)

// factory is cmdutil's Factory with what only the cobra tree needs: the
// colour and pager flags, and the JSON output.
type factory struct {
	*cmdutil.Factory

	noPager bool // --no-pager
}

func newFactory(in io.Reader, out, err io.Writer) *factory {
	f := &factory{Factory: cmdutil.New(in, out, err)}
	f.Factory.PrintJSON = f.printJSON
	return f
}

// jsonFlags are the output flags of every reading command.
type jsonFlags = cmdutil.JSONFlags

// Colour (cmdutil/color.go).
type painter = cmdutil.Painter

const (
	cRed    = cmdutil.CRed
	cYellow = cmdutil.CYellow
)

var (
	paintState  = cmdutil.PaintState
	isTerminal  = cmdutil.IsTerminal
	outTerminal = cmdutil.OutTerminal
)

func addJSONFlags(c *cobra.Command, j *jsonFlags) {
	c.Flags().BoolVar(&j.JSON, "json", false, "print JSON")
	c.Flags().StringVar(&j.Query, "query", "", "print only this gjson path of the JSON (implies --json)")
}

// printJSON writes v as indented JSON, or the part --query selects.
func (f *factory) printJSON(j *jsonFlags, v any) error {
	if j.Query == "" {
		return writeIndented(f.Out, v)
	}
	buf, err := encodeIndented(v)
	if err != nil {
		return err
	}
	if !gjson.ValidBytes(buf.Bytes()) {
		return fmt.Errorf("internal: invalid JSON output")
	}
	res := gjson.GetBytes(buf.Bytes(), j.Query)
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
