package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"github.com/git-rally/git-rally/facts"
)

func newCmdRelease(f *factory) *cobra.Command {
	opts := &releaseOptions{}
	c := &cobra.Command{
		Use:   "release <scope-or-claim-id>...",
		Short: "Release your claims by id or by scope",
		Args:  cobra.MinimumNArgs(1),
		RunE:  func(c *cobra.Command, args []string) error { return runRelease(f.Factory, opts, args) },
	}
	c.Flags().StringVar(&opts.Reason, "reason", "", "why")
	addJSONFlags(c, &opts.J)
	return c
}

// releaseOptions are release's flags.
type releaseOptions struct {
	Reason string
	J      cmdutil.JSONFlags
}

// runRelease releases the caller's claims named by id or by scope.
func runRelease(f *cmdutil.Factory, opts *releaseOptions, args []string) error {
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
				return cmdutil.Usagef("%s is a %s, not a claim", fa.ID, fa.Kind)
			}
			if fa, err = currentClaim(f, fa); err != nil {
				return err
			}
			ids, known = append(ids, fa.ID), append(known, fa)
			continue
		}
		s, err := parseScopes(f, []string{a})
		if err != nil {
			return err
		}
		scopes = append(scopes, s...)
	}
	_, err = f.AppendFacts(&opts.J, facts.ReleaseClaims(o, ids, known, scopes, opts.Reason))
	return err
}

// currentClaim is the claim as it stands: c itself while it is open, else
// the newest re-claim that renewed it.
func currentClaim(f *cmdutil.Factory, c *facts.Fact) (*facts.Fact, error) {
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
