package cli

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
)

// factory is cmdutil's Factory with what only the cobra tree needs: the
// colour and pager flags, and the JSON output.
type factory struct {
	*cmdutil.Factory

	noPager bool     // --no-pager
	args    []string // the command line, for git-rally-server (execServer)
	server  *Server  // set in git-rally-server only
}

func newFactory(in io.Reader, out, err io.Writer) *factory {
	f := &factory{Factory: cmdutil.New(in, out, err)}
	f.PrintJSON = func(j *jsonFlags, v any) error { return printJSON(f.Factory, j, v) }
	return f
}

// jsonFlags are the output flags of every reading command.
type jsonFlags = cmdutil.JSONFlags

// Colour (cmdutil/color.go).
const cYellow = cmdutil.CYellow

var (
	isTerminal  = cmdutil.IsTerminal
	outTerminal = cmdutil.OutTerminal
)

func addJSONFlags(c *cobra.Command, j *jsonFlags) {
	c.Flags().BoolVar(&j.JSON, "json", false, "print JSON")
	c.Flags().StringVar(&j.Query, "query", "", "print only this gjson path of the JSON (implies --json)")
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
