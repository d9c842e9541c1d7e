package cmdutil

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/git-rally/git-rally/facts"
)

// ClaimOptions are claim's flags.
type ClaimOptions struct {
	Shared, Advisory, Takeover bool
	Lease                      string
	Subject                    string
	J                          JSONFlags
}

// Claim claims the scopes in args for the caller (claim).
func Claim(f *Factory, opts *ClaimOptions, args []string) error {
	o, err := f.Identity()
	if err != nil {
		return err
	}
	scopes, err := ParseScopes(f, args)
	if err != nil {
		return err
	}
	var lease time.Duration
	if opts.Lease != "" {
		if lease, err = ParseDuration("--lease", opts.Lease); err != nil {
			return err
		}
		// A lease is kept in whole seconds: one under a second would
		// round to none, which reads as the default window.
		if lease < MinLease {
			return &UsageError{Msg: fmt.Sprintf("bad duration --lease %q: a lease is at least %s", opts.Lease, MinLease),
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

// ParseScopes reads scope arguments against the current worktree, once
// each, refusing a plain path that looks like a pattern.
func ParseScopes(f *Factory, args []string) ([]string, error) {
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
	return &UsageError{Msg: fmt.Sprintf("%q looks like a pattern, but a plain path is one literal file", arg),
		Hint: fmt.Sprintf("glob:%s for every path it matches, or file:%s for a file of that name", s.Value, s.Value)}
}

// MinLease is the shortest lease --lease takes.
const MinLease = time.Second

// ParseDuration reads 90s, 45m, 3h, 2d or a Go duration; it must be
// positive and at most 30 days.
func ParseDuration(flag, v string) (time.Duration, error) {
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
		return 0, &UsageError{Msg: fmt.Sprintf("bad duration %s %q: want a positive time up to 30d, like 90s, 45m, 3h or 2d", flag, v)}
	}
	return d, nil
}
