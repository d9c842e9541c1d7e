package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"github.com/git-rally/git-rally/facts"
)

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

func newCmdInbox(f *factory) *cobra.Command {
	var j jsonFlags
	c := &cobra.Command{
		Use:   "inbox [--tool T]...",
		Short: "Handoffs that wait for you, oldest first",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			tools := f.tools()
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
				return f.PrintJSON(&j, out)
			}
			fmt.Fprintf(f.Out, "inbox of %s: %d waiting\n", strings.Join(tools, ", "), out.Count)
			printInboxItems(f, out.Items)
			if len(out.Acknowledged) > 0 {
				fmt.Fprintf(f.Out, "acknowledged, not resolved yet: %d\n", len(out.Acknowledged))
				printInboxItems(f, out.Acknowledged)
			}
			return nil
		},
	}
	addJSONFlags(c, &j)
	return c
}

func printInboxItems(f *factory, items []inboxItemJSON) {
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
		fmt.Fprintf(f.Out, "  %s from %s%s [%s] %s (%s ago)\n", it.ID, it.From, to, flags, it.Subject, facts.Ago(secs(it.AgeS)))
	}
}

type suggestionJSON struct {
	Action  string `json:"action"`
	Reason  string `json:"reason"`
	Ref     string `json:"ref,omitempty"`
	Command string `json:"command"`
}

type overdueJSON struct {
	ID     string `json:"id"`
	Target string `json:"target"`
	Risk   string `json:"risk"`
}

type nextJSON struct {
	Tool        string           `json:"tool"`
	Suggestions []suggestionJSON `json:"suggestions"`
	Overdue     []overdueJSON    `json:"overdue"`
}

func newCmdNext(f *factory) *cobra.Command {
	var j jsonFlags
	var dry bool
	c := &cobra.Command{
		Use:   "next [--dry-run]",
		Short: "Suggest your next move (a suggestion, not an order); records overdue handoffs you sent",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			o, err := f.Asker()
			if err != nil {
				return err
			}
			st, err := f.State()
			if err != nil {
				return err
			}
			now := f.MustNow()
			plan := st.Next(o, now)
			addPlanSuggestions(st, o, now, &plan)
			risks := map[string]string{}
			if !dry && hasNewOverdue(plan) {
				l, _ := f.Ledger()
				written, err := l.Append(facts.NoResponseRisks(o))
				if err != nil {
					return err
				}
				for _, w := range written {
					risks[w.Ref] = w.ID
				}
			}
			out := nextJSON{Tool: o.Tool, Suggestions: []suggestionJSON{}, Overdue: []overdueJSON{}}
			for _, s := range plan.Suggestions {
				out.Suggestions = append(out.Suggestions, suggestionJSON{Action: s.Action, Reason: s.Reason, Ref: s.Ref, Command: s.Command})
			}
			for _, od := range plan.Overdue {
				risk := od.Risk
				if risk == "" {
					risk = risks[od.ID]
				}
				out.Overdue = append(out.Overdue, overdueJSON{ID: od.ID, Target: od.Target, Risk: risk})
			}
			if j.On() {
				return f.PrintJSON(&j, out)
			}
			for i, s := range out.Suggestions {
				fmt.Fprintf(f.Out, "%d. %s: %s\n   %s\n", i+1, s.Action, cmdutil.LocalizeTimes(s.Reason, time.Local), s.Command)
			}
			for _, od := range out.Overdue {
				r := od.Risk
				if r == "" {
					r = "(not recorded: --dry-run)"
				}
				fmt.Fprintf(f.Out, "overdue: %s to %s, risk %s\n", od.ID, od.Target, r)
			}
			return nil
		},
	}
	c.Flags().BoolVar(&dry, "dry-run", false, "report without writing the no-response risks")
	addJSONFlags(c, &j)
	return c
}

func hasNewOverdue(p facts.NextPlan) bool {
	for _, o := range p.Overdue {
		if o.New {
			return true
		}
	}
	return false
}
