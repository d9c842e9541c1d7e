package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/facts"
)

// The lead seat (SPEC §19): at most one lead; an empty seat goes to the
// first assign; a held seat moves only by its holder, or by --force,
// which records the displaced lead.

func newCmdLead(f *factory) *cobra.Command {
	var j jsonFlags
	c := &cobra.Command{
		Use:   "lead [show|assign|handoff|relinquish]",
		Short: "The room's lead seat: who holds it, assign, hand off, relinquish",
		Long: `The room has at most one lead. An empty seat goes to the first assign; a held
seat moves only by its holder (lead handoff, lead relinquish). Anyone else's
assign is refused (exit 3, naming the holder) unless --force, which seizes the
seat and records the displaced lead. The lead's unscoped blocker freezes the
room: every other peer's check before-write answers room-freeze (stop) until
the lead resolves it. The lead may close any plan. doctor --reap-stale --apply
relinquishes a lead silent for more than 2 hours.`,
		Args:        cobra.NoArgs,
		RunE:        func(c *cobra.Command, args []string) error { return runLeadShow(f, &j) },
		Annotations: map[string]string{bareRuns: "lead show"},
	}
	addJSONFlags(c, &j)
	c.AddCommand(newCmdLeadShow(f), newCmdLeadAssign(f), newCmdLeadHandoff(f), newCmdLeadRelinquish(f))
	return c
}

func newCmdLeadShow(f *factory) *cobra.Command {
	var j jsonFlags
	c := &cobra.Command{
		Use:   "show",
		Short: "Who holds the lead seat, since when, and the freeze it holds",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, args []string) error { return runLeadShow(f, &j) },
	}
	addJSONFlags(c, &j)
	return c
}

type leadJSON struct {
	Lead     *string  `json:"lead"`
	Since    string   `json:"since,omitempty"`
	By       string   `json:"by,omitempty"`
	Reason   string   `json:"reason,omitempty"`
	Fact     string   `json:"fact,omitempty"`
	State    string   `json:"state,omitempty"`
	LastSeen string   `json:"last_seen,omitempty"`
	Freezes  []string `json:"freezes"`
}

func runLeadShow(f *factory, j *jsonFlags) error {
	st, err := f.State()
	if err != nil {
		return err
	}
	now := f.MustNow()
	out := leadJSON{Freezes: []string{}}
	holder := st.LeadHolder()
	if holder != "" {
		last := st.LeadLastSeen()
		out.Lead, out.Since, out.By, out.Reason, out.Fact = &holder, st.Lead.At, st.Lead.Tool, st.Lead.Reason, st.Lead.ID
		out.State, out.LastSeen = facts.Liveness(last, false, now), facts.FormatTime(last)
		for _, b := range st.Freezes() {
			out.Freezes = append(out.Freezes, b.ID)
		}
	}
	if j.On() {
		return f.PrintJSON(j, out)
	}
	if holder == "" {
		fmt.Fprintln(f.Out, "the lead seat is empty")
		fmt.Fprintln(f.Err, "git-rally: hint: git rally lead assign --to <tool>")
		return nil
	}
	fmt.Fprintf(f.Out, "lead: %s (%s, last seen %s ago), since %s by %s (%s)\n", facts.Sanitize(holder, 128), out.State,
		facts.Ago(now.Sub(st.LeadLastSeen())), out.Since, facts.Sanitize(out.By, 128), out.Reason)
	for _, b := range st.Freezes() {
		fmt.Fprintf(f.Out, "room frozen by blocker %s: %s; lift it with `git rally resolve %s` (the lead only)\n", b.ID, facts.Sanitize(b.Subject, 200), b.ID)
	}
	if now.Sub(st.LeadLastSeen()) > facts.LeadSilence {
		fmt.Fprintf(f.Out, "the lead has been silent more than %s: `git rally doctor --reap-stale --apply` relinquishes it\n", facts.Ago(facts.LeadSilence))
	}
	return nil
}

type leadMoveOptions struct {
	to    string
	force bool
	j     jsonFlags
}

func newCmdLeadAssign(f *factory) *cobra.Command {
	opts := &leadMoveOptions{}
	c := &cobra.Command{
		Use:   "assign --to <tool> [--force]",
		Short: "Give the empty seat to a tool (the holder may give it away; --force seizes it)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			o, err := f.Identity()
			if err != nil {
				return err
			}
			_, err = f.AppendFacts(&opts.j, facts.LeadAssignTo(o, opts.to, opts.force))
			return err
		},
	}
	c.Flags().StringVar(&opts.to, "to", "", "the tool that leads")
	c.Flags().BoolVar(&opts.force, "force", false, "seize a seat someone else holds (recorded as displaced:<tool>)")
	addJSONFlags(c, &opts.j)
	return c
}

func newCmdLeadHandoff(f *factory) *cobra.Command {
	opts := &leadMoveOptions{}
	c := &cobra.Command{
		Use:   "handoff --to <tool>",
		Short: "Hand the seat you hold to another tool",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			o, err := f.Identity()
			if err != nil {
				return err
			}
			_, err = f.AppendFacts(&opts.j, facts.LeadHandoffTo(o, opts.to))
			return err
		},
	}
	c.Flags().StringVar(&opts.to, "to", "", "the tool that leads next")
	addJSONFlags(c, &opts.j)
	return c
}

func newCmdLeadRelinquish(f *factory) *cobra.Command {
	var j jsonFlags
	c := &cobra.Command{
		Use:   "relinquish",
		Short: "Leave the seat you hold empty",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			o, err := f.Identity()
			if err != nil {
				return err
			}
			_, err = f.AppendFacts(&j, facts.LeadRelinquishBy(o))
			return err
		},
	}
	addJSONFlags(c, &j)
	return c
}
