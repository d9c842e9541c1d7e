package cli

import (
	"fmt"
	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"runtime"
	"runtime/debug"
)

// commit may be set at link time (-ldflags "-X .../cli/cmdutil.commit=abc123")
// for builds made without VCS stamping; the build info wins when it has one.
var commit string

// VersionInfo is what `version` reports, from the binary's build info:
// the module version (a tag, a pseudo-version, or "(devel)" for a build
// from a checkout) and the commit go stamped into it.
type VersionInfo struct {
	Version  string `json:"version"`
	Commit   string `json:"commit,omitempty"`
	Time     string `json:"time,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
}

// ReadVersion reads the version from the binary's build info.
func ReadVersion() VersionInfo {
	v := VersionInfo{Version: "(devel)", Commit: commit, Go: runtime.Version()}
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
func (v VersionInfo) String() string {
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

// Version prints the version, as JSON under --json (j).
func Version(f *cmdutil.Factory, j *cmdutil.JSONFlags) error {
	v := ReadVersion()
	if j.On() {
		return f.PrintJSON(j, v)
	}
	fmt.Fprintf(f.Out, "git-rally %s %s\n", v, v.Go)
	return nil
}
