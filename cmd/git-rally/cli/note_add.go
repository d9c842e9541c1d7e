package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"github.com/git-rally/git-rally/facts"
)

var simpleShort = map[string]string{
	facts.KindNote:     "Record a note",
	facts.KindBlocker:  "Record a blocker; with --scope it stops writes to those paths until resolved; the lead's without a scope freezes the room",
	facts.KindRisk:     "Record a risk",
	facts.KindDecision: "Record a decision",
}

func newCmdSimple(f *factory, kind string) *cobra.Command {
	opts := &simpleOptions{}
	c := &cobra.Command{
		Use:   kind + " --subject <text> [--scope S]... [--severity S] [--body B] [--ref ID]",
		Short: simpleShort[kind],
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, args []string) error { return runSimple(f.Factory, kind, opts) },
	}
	c.Flags().StringVar(&opts.Subject, "subject", "", "one line")
	c.Flags().StringVar(&opts.Body, "body", "", "details")
	c.Flags().StringArrayVar(&opts.Scopes, "scope", nil, "a scope it concerns (repeat)")
	c.Flags().StringVar(&opts.Severity, "severity", "", "info, warn, high or critical")
	c.Flags().StringVar(&opts.Ref, "ref", "", "a fact it refers to")
	c.Flags().StringVar(&opts.Status, "status", "", "status, e.g. binding")
	c.Flags().StringVar(&opts.Target, "target", "", "who it is addressed to")
	addJSONFlags(c, &opts.J)
	return c
}

// simpleOptions are the flags of note, blocker, risk and decision.
type simpleOptions struct {
	Subject, Body, Severity, Ref, Status, Target string
	Scopes                                       []string
	J                                            cmdutil.JSONFlags
}

// runSimple appends a note, blocker, risk or decision (kind).
func runSimple(f *cmdutil.Factory, kind string, opts *simpleOptions) error {
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
		if fact.Scopes, err = parseScopes(f, opts.Scopes); err != nil {
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
