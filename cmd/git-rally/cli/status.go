package cli

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"github.com/git-rally/git-rally/delivery"
	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/ledger"
)

type statusOptions struct {
	subject string
	j       jsonFlags
}

func newCmdStatus(f *factory) *cobra.Command {
	opts := &statusOptions{}
	c := &cobra.Command{
		Use:   "status <working|needs-input|idle|blocked|review|done> [--subject <text>]",
		Short: "Say what you are doing now (a status fact): who waits for a person shows at once",
		Long: `Record your activity as a status fact, only when it changed (or with a
--subject). The hooks of Claude Code, Codex and Gemini CLI record working,
needs-input, idle and exited from the host's own events; a custom agent or a
person declares it here. sessions, the room, watch, serve and the MCP room
show it.

A managed session that declares idle gets what was queued for it while it
could not take it (handoffs, messages): they are printed here and their
delivery facts written.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return runStatus(f, opts, args[0]) },
	}
	c.Flags().StringVar(&opts.subject, "subject", "", "a note on what you are doing or waiting for")
	addJSONFlags(c, &opts.j)
	return c
}

type statusJSON struct {
	Activity  string            `json:"activity"`
	Changed   bool              `json:"changed"`
	Delivered []string          `json:"delivered"`
	Messages  string            `json:"messages,omitempty"`
	Facts     []json.RawMessage `json:"facts"`
}

func runStatus(f *factory, opts *statusOptions, activity string) error {
	if err := facts.CheckActivity(activity); err != nil {
		return err
	}
	if err := facts.CheckText("subject", opts.subject, facts.MaxSubject); err != nil {
		return err
	}
	o, err := f.Identity()
	if err != nil {
		return err
	}
	l, err := f.Ledger()
	if err != nil {
		return err
	}
	fa, err := l.SetActivity(o, activity, opts.subject)
	f.Forget()
	if err != nil {
		return err
	}
	out := statusJSON{Activity: activity, Changed: fa != nil, Delivered: []string{}, Facts: []json.RawMessage{}}
	var written []*facts.Fact
	if fa != nil {
		written = append(written, fa)
	}
	if activity == facts.ActivityIdle {
		text, fs, err := takeQueued(f, l, o)
		if err != nil {
			return err
		}
		out.Messages = text
		for _, d := range fs {
			out.Delivered = append(out.Delivered, orDefault(d.Ref, "message"))
		}
		written = append(written, fs...)
	}
	out.Facts = cmdutil.RawFacts(written)
	if opts.j.On() {
		return f.PrintJSON(&opts.j, out)
	}
	if fa != nil {
		fmt.Fprintf(f.Out, "%s is %s\n", ident(o.String()), activity)
	} else {
		fmt.Fprintf(f.Out, "%s is %s already; nothing recorded\n", ident(o.String()), activity)
	}
	if out.Messages != "" {
		fmt.Fprintf(f.Out, "\n%s\n", out.Messages)
	}
	return nil
}

// takeQueued hands over what was queued for the caller's managed session
// (SPEC §13: a custom agent that declares idle gets deliveries as a known
// host does), recording their delivery.
func takeQueued(f *factory, l *ledger.Ledger, o facts.Owner) (string, []*facts.Fact, error) {
	st, err := f.State()
	if err != nil {
		return "", nil, err
	}
	s := st.Sessions[o.Session]
	if s == nil || s.Backend == "" || s.Tool != o.Tool || !delivery.Waiting(l.CommonDir(), s.Name) {
		return "", nil, nil
	}
	es := delivery.Take(l.CommonDir(), s.Name)
	open := func(id string) *facts.Fact {
		h := st.Handoffs()[id]
		if h == nil || !facts.AddressedTo(h.Fact, o.Tool) || h.State() == "resolved" {
			return nil
		}
		return h.Fact
	}
	text, fs := delivery.Handover(es, o.Tool, s.Name, open)
	if len(fs) == 0 {
		return "", nil, nil
	}
	written, err := l.Append(func(*facts.State, time.Time) ([]*facts.Fact, error) { return fs, nil })
	f.Forget()
	if err != nil {
		delivery.Requeue(l.CommonDir(), s.Name, es, l.Now())
		return "", nil, err
	}
	return text, written, nil
}
