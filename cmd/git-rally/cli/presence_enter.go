package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"github.com/git-rally/git-rally/facts"
)

type presenceOptions struct {
	subject string
	j       jsonFlags
}

func newCmdEnter(f *factory) *cobra.Command {
	opts := &presenceOptions{}
	c := &cobra.Command{
		Use:   "enter [--subject <text>]",
		Short: "Say you are here (a presence fact)",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, args []string) error { return runEnter(f.Factory, opts.subject, &opts.j) },
	}
	c.Flags().StringVar(&opts.subject, "subject", "", "what you are doing")
	addJSONFlags(c, &opts.j)
	return c
}

func newCmdLeave(f *factory) *cobra.Command {
	opts := &presenceOptions{}
	c := &cobra.Command{
		Use:   "leave",
		Short: "Leave the room; closes all your claims",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, args []string) error { return runLeave(f.Factory, opts.subject, &opts.j) },
	}
	c.Flags().StringVar(&opts.subject, "subject", "", "a parting note")
	addJSONFlags(c, &opts.j)
	return c
}

func newCmdWhoami(f *factory) *cobra.Command {
	var j jsonFlags
	c := &cobra.Command{
		Use:   "whoami",
		Short: "Print the identity writing commands would use",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, args []string) error { return runWhoami(f.Factory, &j) },
	}
	addJSONFlags(c, &j)
	return c
}

// runEnter appends a presence fact for the caller.
func runEnter(f *cmdutil.Factory, subject string, j *cmdutil.JSONFlags) error {
	o, err := f.Identity()
	if err != nil {
		return err
	}
	_, err = f.AppendFacts(j, facts.Simple(&facts.Fact{Kind: facts.KindPresence, Tool: o.Tool, Session: o.Session, Subject: subject}))
	return err
}

// runLeave appends the caller's leave fact, which closes its claims; nothing
// when it is not in the room.
func runLeave(f *cmdutil.Factory, subject string, j *cmdutil.JSONFlags) error {
	o, err := f.Identity()
	if err != nil {
		return err
	}
	_, err = f.AppendFacts(j, func(st *facts.State, now time.Time) ([]*facts.Fact, error) {
		n := len(st.OwnedClaims(o))
		if p := st.Peers[o.String()]; n == 0 && (p == nil || p.Left) {
			return nil, &facts.NoChange{Msg: o.String() + " is not in the room (left already); nothing written"}
		}
		subj := subject
		if subj == "" {
			subj = fmt.Sprintf("leaving; closes %s", plural(n, "claim"))
		}
		return []*facts.Fact{{Kind: facts.KindLeave, Tool: o.Tool, Session: o.Session, Subject: subj}}, nil
	})
	return err
}

// runWhoami prints the identity writing commands would use.
func runWhoami(f *cmdutil.Factory, j *cmdutil.JSONFlags) error {
	o, err := f.Identity()
	if err != nil {
		return err
	}
	if j.On() {
		out := map[string]string{"tool": o.Tool, "owner": o.String()}
		if o.Session != "" {
			out["session"] = o.Session // omitted when empty, as the room does
		}
		return f.PrintJSON(j, out)
	}
	fmt.Fprintln(f.Out, o.String())
	return nil
}
