package cli

import (
	"github.com/spf13/cobra"
)

func newCmdClaim(f *factory) *cobra.Command {
	opts := &ClaimOptions{}
	c := &cobra.Command{
		Use:   "claim <scope>... [--shared|--advisory] [--lease <dur>] [--subject <text>] [--takeover]",
		Short: "Claim paths or resources; refused (exit 3) when another owner holds an overlapping scope",
		Long: `Claim scopes: a path (a file, or a dir when it ends in / or is a directory),
or a typed scope file:, dir:, glob:, branch:, service:, port:, task:.
The lease is 30 minutes for one file and 120 otherwise; your own activity
renews it. An expired lease still blocks until released or taken over.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return Claim(f.Factory, opts, args) },
	}
	c.Flags().BoolVar(&opts.Shared, "shared", false, "shared access: compatible with other shared claims")
	c.Flags().BoolVar(&opts.Advisory, "advisory", false, "advisory: never conflicts, only informs")
	c.Flags().StringVar(&opts.Lease, "lease", "", "lease window, e.g. 45m or 3h")
	c.Flags().StringVar(&opts.Subject, "subject", "", "what the claim is for")
	c.Flags().BoolVar(&opts.Takeover, "takeover", false, "release conflicting claims whose owners have been silent 2h or more")
	c.MarkFlagsMutuallyExclusive("shared", "advisory")
	addJSONFlags(c, &opts.J)
	return c
}

func newCmdRelease(f *factory) *cobra.Command {
	opts := &ReleaseOptions{}
	c := &cobra.Command{
		Use:   "release <scope-or-claim-id>...",
		Short: "Release your claims by id or by scope",
		Args:  cobra.MinimumNArgs(1),
		RunE:  func(c *cobra.Command, args []string) error { return Release(f.Factory, opts, args) },
	}
	c.Flags().StringVar(&opts.Reason, "reason", "", "why")
	addJSONFlags(c, &opts.J)
	return c
}
