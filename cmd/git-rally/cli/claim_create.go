package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"github.com/git-rally/git-rally/facts"
)

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
		RunE: func(c *cobra.Command, args []string) error { return runClaim(f.Factory, opts, args) },
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

// claimOptions are claim's flags.
type claimOptions struct {
	Shared, Advisory, Takeover bool
	Lease                      string
	Subject                    string
	J                          cmdutil.JSONFlags
}

// runClaim claims the scopes in args for the caller (claim).
func runClaim(f *cmdutil.Factory, opts *claimOptions, args []string) error {
	o, err := f.Identity()
	if err != nil {
		return err
	}
	scopes, err := parseScopes(f, args)
	if err != nil {
		return err
	}
	var lease time.Duration
	if opts.Lease != "" {
		if lease, err = parseDuration("--lease", opts.Lease); err != nil {
			return err
		}
		// A lease is kept in whole seconds: one under a second would
		// round to none, which reads as the default window.
		if lease < MinLease {
			return &cmdutil.UsageError{Msg: fmt.Sprintf("bad duration --lease %q: a lease is at least %s", opts.Lease, MinLease),
				Hint: "git rally claim <scope> --lease 45m"}
		}
	}
	if err := facts.CheckText("subject", opts.Subject, facts.MaxSubject); err != nil {
		return err
	}
	access := facts.Exclusive
	if opts.Shared {
		access = facts.Shared
	} else if opts.Advisory {
		access = facts.Advisory
	}
	_, err = f.AppendFacts(&opts.J, facts.Claim(facts.ClaimRequest{Owner: o, Scopes: scopes, Access: access,
		Lease: lease, Subject: opts.Subject, Takeover: opts.Takeover}))
	return err
}

// parseScopes reads scope arguments against the current worktree, once
// each, refusing a plain path that looks like a pattern.
func parseScopes(f *cmdutil.Factory, args []string) ([]string, error) {
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
	return &cmdutil.UsageError{Msg: fmt.Sprintf("%q looks like a pattern, but a plain path is one literal file", arg),
		Hint: fmt.Sprintf("glob:%s for every path it matches, or file:%s for a file of that name", s.Value, s.Value)}
}

// MinLease is the shortest lease --lease takes.
const MinLease = time.Second

// ParseDuration reads 90s, 45m, 3h, 2d or a Go duration; it must be
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
		return 0, &cmdutil.UsageError{Msg: fmt.Sprintf("bad duration %s %q: want a positive time up to 30d, like 90s, 45m, 3h or 2d", flag, v)}
	}
	return d, nil
}
