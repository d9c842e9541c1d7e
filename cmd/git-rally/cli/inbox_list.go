package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"github.com/git-rally/git-rally/facts"
)

func newCmdInbox(f *factory) *cobra.Command {
	var j jsonFlags
	c := &cobra.Command{
		Use:   "inbox [--tool T]...",
		Short: "Handoffs that wait for you, oldest first",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, args []string) error { return runInbox(f.Factory, &j) },
	}
	addJSONFlags(c, &j)
	return c
}

type inboxItemJSON struct {
	ID       string `json:"id"`
	From     string `json:"from"`
	Target   string `json:"target"`
	Subject  string `json:"subject"`
	Body     string `json:"body,omitempty"`
	At       string `json:"at"`
	AgeS     int64  `json:"age_s"`
	AckBy    string `json:"ack_by,omitempty"`
	Stale    bool   `json:"stale"`
	State    string `json:"state"`
	Verified string `json:"verified,omitempty"`
}

type inboxJSON struct {
	Tool  string          `json:"tool"`
	Tools []string        `json:"tools,omitempty"`
	Count int             `json:"count"`
	Items []inboxItemJSON `json:"items"`
	// Acknowledged are the caller's work in progress: handoffs it
	// acknowledged and has not resolved. They wait for no answer and are
	// not counted.
	Acknowledged []inboxItemJSON `json:"acknowledged"`
}

// runInbox prints the handoffs that wait for the --tool identities (or the
// asker), oldest first, and the caller's acknowledged ones.
func runInbox(f *cmdutil.Factory, j *cmdutil.JSONFlags) error {
	tools := f.ToolList
	if len(tools) == 0 {
		o, err := f.Asker()
		if err != nil {
			return err
		}
		tools = []string{o.Tool}
	}
	st, err := f.State()
	if err != nil {
		return err
	}
	now := f.MustNow()
	out := inboxJSON{Tool: tools[0], Items: []inboxItemJSON{}, Acknowledged: []inboxItemJSON{}}
	if len(tools) > 1 {
		out.Tools = tools
	}
	v, err := f.Verifier()
	if err != nil {
		return err
	}
	for _, it := range st.Inbox(tools, now) {
		item := inboxItemJSON{Verified: verdictOf(v, it.Fact.ID, it.Fact.Tool), ID: it.Fact.ID, From: it.Fact.Tool, Target: it.Fact.Target,
			Subject: facts.Sanitize(it.Fact.Subject, 600), Body: facts.Sanitize(it.Fact.Body, 2000), At: it.Fact.At,
			AgeS: int64(it.Age.Seconds()), AckBy: it.Fact.AckBy, Stale: it.Stale, State: it.State}
		if it.State == "acknowledged" {
			out.Acknowledged = append(out.Acknowledged, item)
		} else {
			out.Items = append(out.Items, item)
		}
	}
	out.Count = len(out.Items)
	if j.On() {
		return f.PrintJSON(j, out)
	}
	fmt.Fprintf(f.Out, "inbox of %s: %d waiting\n", strings.Join(tools, ", "), out.Count)
	printInboxItems(f, out.Items)
	if len(out.Acknowledged) > 0 {
		fmt.Fprintf(f.Out, "acknowledged, not resolved yet: %d\n", len(out.Acknowledged))
		printInboxItems(f, out.Acknowledged)
	}
	return nil
}

func printInboxItems(f *cmdutil.Factory, items []inboxItemJSON) {
	for _, it := range items {
		flags := it.State
		if it.Stale {
			flags += ", stale"
		}
		if it.AckBy != "" {
			flags += ", reply by " + cmdutil.LocalTime(it.AckBy, time.Local)
		}
		if it.Verified != "" {
			flags += ", " + it.Verified
		}
		to := ""
		if it.Target == facts.AllTarget {
			to = " to all"
		}
		fmt.Fprintf(f.Out, "  %s from %s%s [%s] %s (%s ago)\n", it.ID, it.From, to, flags, it.Subject, facts.Ago(time.Duration(it.AgeS)*time.Second))
	}
}
