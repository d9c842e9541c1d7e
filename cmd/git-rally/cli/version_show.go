package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
)

func newCmdVersion(f *factory) *cobra.Command {
	var j jsonFlags
	c := &cobra.Command{
		Use:   "version",
		Short: "Print git-rally's version and the commit it was built from",
		Example: `  git rally version
  git rally --version
  git rally version --json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return runVersion(f.Factory, &j)
		},
	}
	addJSONFlags(c, &j)
	return c
}

// setVersion gives the root --version, printed as `version` prints.
func setVersion(root *cobra.Command) {
	v := readVersion()
	root.Version = v.String()
	root.SetVersionTemplate("git-rally {{.Version}} " + v.Go + "\n")
}

// commit may be set at link time (-ldflags "-X .../cmd/git-rally/cli.commit=abc123")
// for builds made without VCS stamping; the build info wins when it has one.
var commit string

// versionInfo is what `version` reports, from the binary's build info:
// the module version (a tag, a pseudo-version, or "(devel)" for a build
// from a checkout) and the commit go stamped into it.
type versionInfo struct {
	Version  string `json:"version"`
	Commit   string `json:"commit,omitempty"`
	Time     string `json:"time,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
}

// readVersion reads the version from the binary's build info.
func readVersion() versionInfo {
	v := versionInfo{Version: "(devel)", Commit: commit, Go: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// String is the version as `version` prints it.
func (v versionInfo) String() string {
	s := v.Version
	if v.Commit != "" {
		c := v.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		if v.Modified {
			c += "-dirty"
		}
		s += " (" + c
		if v.Time != "" {
			s += ", " + v.Time
		}
		s += ")"
	}
	return s
}

// runVersion prints the version, as JSON under --json (j).
func runVersion(f *cmdutil.Factory, j *cmdutil.JSONFlags) error {
	v := readVersion()
	if j.On() {
		return f.PrintJSON(j, v)
	}
	fmt.Fprintf(f.Out, "git-rally %s %s\n", v, v.Go)
	return nil
}
