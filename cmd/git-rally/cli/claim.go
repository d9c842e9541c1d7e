package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/facts"
)

type claimOptions struct {
	shared, advisory, takeover bool
	lease                      string
	subject                    string
	j                          jsonFlags
}

func newCmdClaim(f *factory) *cobra.Command {
	opts := &claimOptions{}
	c := &cobra.Command{
		Use:   "claim <scope>... [--shared|--advisory] [--lease <dur>] [--subject <text>] [--takeover]",
		Short: "Claim paths or resources; refused (exit 3) when another owner holds an overlapping scope",
		Long: `Claim scopes: a path (a file, or a dir when it ends in / or is a directory),
or a typed scope file:, dir:, glob:, branch:, service:, port:, task:.
The lease is 30 minutes for one file and 120 otherwise; your own activity
renews it. An expired lease still blocks until released or taken over.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return runClaim(f, opts, args) },
	}
	c.Flags().BoolVar(&opts.shared, "shared", false, "shared access: compatible with other shared claims")
	c.Flags().BoolVar(&opts.advisory, "advisory", false, "advisory: never conflicts, only informs")
	c.Flags().StringVar(&opts.lease, "lease", "", "lease window, e.g. 45m or 3h")
	c.Flags().StringVar(&opts.subject, "subject", "", "what the claim is for")
	c.Flags().BoolVar(&opts.takeover, "takeover", false, "release conflicting claims whose owners have been silent 2h or more")
	c.MarkFlagsMutuallyExclusive("shared", "advisory")
	addJSONFlags(c, &opts.j)
	return c
}

func runClaim(f *factory, opts *claimOptions, args []string) error {
	o, err := f.Identity()
	if err != nil {
		return err
	}
	scopes, err := parseScopes(f, args)
	if err != nil {
		return err
	}
	var lease time.Duration
	if opts.lease != "" {
		if lease, err = parseDuration("--lease", opts.lease); err != nil {
			return err
		}
	}
	if err := facts.CheckText("subject", opts.subject, facts.MaxSubject); err != nil {
		return err
	}
	access := facts.Exclusive
	if opts.shared {
		access = facts.Shared
	} else if opts.advisory {
		access = facts.Advisory
	}
	_, err = f.appendFacts(&opts.j, facts.Claim(facts.ClaimRequest{Owner: o, Scopes: scopes, Access: access,
		Lease: lease, Subject: opts.subject, Takeover: opts.takeover}))
	return err
}

func parseScopes(f *factory, args []string) ([]string, error) {
	pc, err := f.PathContext()
	if err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	for _, a := range args {
		s, err := facts.ParseScope(a, pc)
		if err != nil {
			return nil, err
		}
		if err := globHint(a, s, pc); err != nil {
			return nil, err
		}
		if !seen[s.String()] {
			seen[s.String()] = true
			out = append(out, s.String())
		}
	}
	return out, nil
}

// globHint refuses a plain path with pattern characters that names no
// file: claim 'src/*.ts' would hold one file literally named "*.ts" and
// leave every .ts file free. A typed scope (file:, glob:) says what it means.
func globHint(arg string, s facts.Scope, pc facts.PathContext) error {
	if (s.Kind != "file" && s.Kind != "dir") || strings.HasPrefix(arg, s.Kind+":") || !strings.ContainsAny(arg, "*?[") {
		return nil
	}
	if pc.Root != "" {
		if _, err := os.Lstat(filepath.Join(pc.Root, filepath.FromSlash(s.Value))); err == nil {
			return nil // a file with that very name
		}
	}
	return &usageError{Msg: fmt.Sprintf("%q looks like a pattern, but a plain path is one literal file", arg),
		Hint: fmt.Sprintf("glob:%s for every path it matches, or file:%s for a file of that name", s.Value, s.Value)}
}

// parseDuration reads 90s, 45m, 3h, 2d or a Go duration; it must be
// positive and at most 30 days.
func parseDuration(flag, v string) (time.Duration, error) {
	s := strings.TrimSpace(v)
	var d time.Duration
	var err error
	if strings.HasSuffix(s, "d") {
		var n int
		n, err = strconv.Atoi(strings.TrimSuffix(s, "d"))
		if n < 0 || n > 30 { // before the multiplication, which overflows
			n = -1
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		d, err = time.ParseDuration(s)
	}
	if err != nil || d <= 0 || d > 30*24*time.Hour {
		return 0, &usageError{Msg: fmt.Sprintf("bad duration %s %q: want a positive time up to 30d, like 90s, 45m, 3h or 2d", flag, v)}
	}
	return d, nil
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
				s, err := parseScopes(f, []string{a})
				if err != nil {
					return err
				}
				scopes = append(scopes, s...)
			}
			_, err = f.appendFacts(&opts.j, facts.ReleaseClaims(o, ids, known, scopes, opts.reason))
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
