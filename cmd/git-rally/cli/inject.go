package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/session"
)

type injectOptions struct {
	handoff, text string
	dryRun        bool
	j             jsonFlags
}

func newCmdInject(f *factory) *cobra.Command {
	opts := &injectOptions{}
	c := &cobra.Command{
		Use:   "inject <session> (--handoff <id> | --text <text>) [--dry-run]",
		Short: "Paste a handoff or a message into a managed session's terminal and record the delivery",
		Long: `Hand a message to the session only when it waits at its own prompt (SPEC §13):
then it is pasted as one inert line (a bracketed tmux buffer paste, never key
names; no character a shell or a host gives a meaning to), headed by the
sender and the handoff id, ending with the command that acknowledges it, and
one Enter submits it. One delivery fact records it with status
sent_unverified: delivery is not receipt, only a fact the target writes
answers the handoff.

A known host (claude, codex, gemini, opencode) that is working, waits for a
person (a permission prompt, a dialog) or has not reported its activity yet
gets the message queued ("queued": true): its hooks hand it over when its
turn ends, and the delivery fact is written then. A custom command or an
adopted pane that reports no activity gets the paste, unless it runs a
shell in its foreground: a shell is never typed into (queued; ` + "`git rally status idle`" + `
in that session prints what waits). A handoff for another tool, or a session
that is not live, is refused (exit 3) and nothing is written.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return runInject(f, opts, args[0]) },
	}
	c.Flags().StringVar(&opts.handoff, "handoff", "", "the handoff to deliver")
	c.Flags().StringVar(&opts.text, "text", "", "a message to deliver")
	c.Flags().BoolVar(&opts.dryRun, "dry-run", false, "print the message; paste and record nothing")
	c.MarkFlagsMutuallyExclusive("handoff", "text")
	addJSONFlags(c, &opts.j)
	return c
}

type injectJSON struct {
	Session       string            `json:"session"`
	Handoff       string            `json:"handoff,omitempty"`
	Delivery      string            `json:"delivery,omitempty"`
	ReachedTarget bool              `json:"reached_target"`
	Queued        bool              `json:"queued"`
	Why           string            `json:"why,omitempty"`
	DryRun        bool              `json:"dry_run,omitempty"`
	Message       string            `json:"message,omitempty"`
	Facts         []json.RawMessage `json:"facts"`
}

func runInject(f *factory, opts *injectOptions, name string) error {
	if opts.handoff == "" && opts.text == "" {
		return &usageError{Msg: "inject needs --handoff <id> or --text <text>", Hint: "git rally inject " + name + " --handoff <id>"}
	}
	o, err := f.Identity()
	if err != nil {
		return err
	}
	st, s, err := resolveSession(f, name)
	if err != nil {
		return err
	}
	d := &session.Delivery{Session: s, Text: opts.text, Sender: o}
	if opts.handoff != "" {
		l, err := f.Ledger()
		if err != nil {
			return err
		}
		if d.Handoff, err = l.Find(opts.handoff); err != nil {
			return err
		}
	}
	b, err := backendReady(s.Backend)
	if err != nil {
		return err
	}
	out := injectJSON{Session: s.Name, Facts: []json.RawMessage{}}
	if d.Handoff != nil {
		out.Handoff = d.Handoff.ID
	}
	if opts.dryRun {
		live, err := liveTargets(b, st)
		if err != nil {
			return err
		}
		if err := d.Check(live); err != nil {
			return err
		}
		out.DryRun, out.Message = true, d.Line()
		if opts.j.On() {
			return f.PrintJSON(&opts.j, out)
		}
		fmt.Fprintf(f.Out, "would paste into %s (%s):\n%s\n", ident(s.Name), ident(s.Target), out.Message)
		return nil
	}
	res, err := deliver(f, b, d)
	if err != nil {
		return err
	}
	out.Delivery, out.ReachedTarget, out.Queued, out.Why, out.Facts = res.Delivery, res.ReachedTarget, res.Queued, res.Why, res.Facts
	if opts.j.On() {
		return f.PrintJSON(&opts.j, out)
	}
	what := "a message"
	if d.Handoff != nil {
		what = "handoff " + d.Handoff.ID
	}
	if res.Queued {
		fmt.Fprintf(f.Out, "queued %s for %s (%s): %s; it is handed over when the session is next idle at its prompt\n", what, ident(s.Name), ident(s.Tool), res.Why)
		fmt.Fprintf(f.Out, "  look     git rally sessions\n")
		return nil
	}
	fmt.Fprintf(f.Out, "pasted %s into %s (%s): %s, not yet acknowledged\n", what, ident(s.Name), ident(s.Tool), session.DeliveryStatus)
	fmt.Fprintf(f.Out, "  look     git rally capture %s\n", s.Name)
	return nil
}

// deliveryJSON is what a delivery did, for inject and handoff --target.
type deliveryJSON struct {
	Session       string            `json:"session"`
	Delivery      string            `json:"delivery"`
	ReachedTarget bool              `json:"reached_target"`
	Queued        bool              `json:"queued"`
	Why           string            `json:"why,omitempty"`
	Facts         []json.RawMessage `json:"facts"`
}

func deliver(f *factory, b session.Backend, d *session.Delivery) (*deliveryJSON, error) {
	l, err := f.Ledger()
	if err != nil {
		return nil, err
	}
	res, err := session.Deliver(l, b, d)
	f.Forget()
	if err != nil {
		return nil, err
	}
	if res.Queued {
		return &deliveryJSON{Session: d.Session.Name, Delivery: "queued", Queued: true, Why: res.Why, Facts: []json.RawMessage{}}, nil
	}
	return &deliveryJSON{Session: d.Session.Name, Delivery: session.DeliveryStatus, ReachedTarget: true, Facts: cmdutil.RawFacts(res.Facts)}, nil
}

// deliverHandoff delivers a handoff just recorded to the live managed
// session of its target, if there is one: nil when there is none. It asks
// the backend only when the room has a session of that tool.
func deliverHandoff(f *factory, h *facts.Fact, sender facts.Owner) (*deliveryJSON, error) {
	st, err := f.State()
	if err != nil {
		return nil, err
	}
	var candidate bool
	for _, s := range session.Managed(st) {
		if s.Tool == h.Target && s.Status != session.StatusStopped {
			candidate = true
		}
	}
	if !candidate {
		return nil, nil
	}
	b, err := newBackend("")
	if err != nil || b.Available() != nil {
		return nil, nil
	}
	live, err := b.Live()
	if err != nil {
		return nil, err
	}
	s := session.LiveFor(st, live, h.Target)
	if s == nil {
		return nil, nil
	}
	return deliver(f, b, &session.Delivery{Session: s, Handoff: h, Sender: sender})
}
