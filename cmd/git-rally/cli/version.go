package cli

import (
	"github.com/spf13/cobra"
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
			return Version(f.Factory, &j)
		},
	}
	addJSONFlags(c, &j)
	return c
}

// setVersion gives the root --version, printed as `version` prints.
func setVersion(root *cobra.Command) {
	v := ReadVersion()
	root.Version = v.String()
	root.SetVersionTemplate("git-rally {{.Version}} " + v.Go + "\n")
}
