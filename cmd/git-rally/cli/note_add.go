package cli

import (
	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"strings"

	"github.com/git-rally/git-rally/facts"
)

// SimpleOptions are the flags of note, blocker, risk and decision.
type SimpleOptions struct {
	Subject, Body, Severity, Ref, Status, Target string
	Scopes                                       []string
	J                                            cmdutil.JSONFlags
}

// Simple appends a note, blocker, risk or decision (kind).
func Simple(f *cmdutil.Factory, kind string, opts *SimpleOptions) error {
	o, err := f.Identity()
	if err != nil {
		return err
	}
	if strings.TrimSpace(opts.Subject) == "" {
		return &cmdutil.UsageError{Msg: kind + " needs --subject <text>"}
	}
	fact := &facts.Fact{Kind: kind, Tool: o.Tool, Session: o.Session, Subject: opts.Subject, Body: opts.Body,
		Severity: opts.Severity, Status: opts.Status, Target: opts.Target}
	if len(opts.Scopes) > 0 {
		if fact.Scopes, err = ParseScopes(f, opts.Scopes); err != nil {
			return err
		}
	}
	if opts.Severity != "" && !validSeverity(opts.Severity) {
		return cmdutil.Usagef("bad --severity %q: want info, warn, high or critical", opts.Severity)
	}
	if opts.Ref != "" {
		l, err := f.Ledger()
		if err != nil {
			return err
		}
		t, err := l.Find(opts.Ref)
		if err != nil {
			return err
		}
		fact.Ref = t.ID
	}
	_, err = f.AppendFacts(&opts.J, facts.Simple(fact))
	return err
}

func validSeverity(s string) bool {
	switch s {
	case "info", "warn", "high", "critical", "low", "medium":
		return true
	}
	return false
}
