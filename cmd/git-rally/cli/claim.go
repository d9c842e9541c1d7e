package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"github.com/git-rally/git-rally/facts"
)

func newCmdClaim(f *factory) *cobra.Command {
	opts := &cmdutil.ClaimOptions{}
	c := &cobra.Command{
		Use:   "claim <scope>... [--shared|--advisory] [--lease <dur>] [--subject <text>] [--takeover]",
		Short: "Claim paths or resources; refused (exit 3) when another owner holds an overlapping scope",
		Long: `Claim scopes: a path (a file, or a dir when it ends in / or is a directory),
or a typed scope file:, dir:, glob:, branch:, service:, port:, task:.
The lease is 30 minutes for one file and 120 otherwise; your own activity
renews it. An expired lease still blocks until released or taken over.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return cmdutil.Claim(f.Factory, opts, args) },
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

type releaseOptions struct {
	reason string
	j      jsonFlags
}

func newCmdRelease(f *factory) *cobra.Command {
	opts := &releaseOptions{}
	c := &cobra.Command{
		Use:   "release <scope-or-claim-id>...",
		Short: "Release your claims by id or by scope",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o, err := f.Identity()
			if err != nil {
				return err
			}
			var ids, scopes []string
			var known []*facts.Fact
			l, err := f.Ledger()
			if err != nil {
				return err
			}
			for _, a := range args {
				if looksLikeID(a) {
					fa, err := l.Find(a)
					if err != nil {
						return err
					}
					if fa.Kind != facts.KindClaim {
						return usagef("%s is a %s, not a claim", fa.ID, fa.Kind)
					}
					if fa, err = currentClaim(f, fa); err != nil {
						return err
					}
					ids, known = append(ids, fa.ID), append(known, fa)
					continue
				}
				s, err := cmdutil.ParseScopes(f.Factory, []string{a})
				if err != nil {
					return err
				}
				scopes = append(scopes, s...)
			}
			_, err = f.AppendFacts(&opts.j, facts.ReleaseClaims(o, ids, known, scopes, opts.reason))
			return err
		},
	}
	c.Flags().StringVar(&opts.reason, "reason", "", "why")
	addJSONFlags(c, &opts.j)
	return c
}

// currentClaim is the claim as it stands: c itself while it is open, else
// the newest re-claim that renewed it.
func currentClaim(f *factory, c *facts.Fact) (*facts.Fact, error) {
	st, err := f.State()
	if err != nil || st.Claims.Get(c.ID) != nil {
		return c, err
	}
	all, err := f.Opened().All()
	if err != nil {
		return nil, err
	}
	return facts.LatestRenewal(all, c), nil
}

// looksLikeID tells a fact id (f_ and hex) from a path.
func looksLikeID(s string) bool {
	if !strings.HasPrefix(s, "f_") || len(s) < 8 {
		return false
	}
	return strings.Trim(s[2:], "0123456789abcdef") == ""
}
