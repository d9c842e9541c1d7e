package cli

import (
	"fmt"
	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"time"

	"github.com/git-rally/git-rally/facts"
)

// Enter appends a presence fact for the caller.
func Enter(f *cmdutil.Factory, subject string, j *cmdutil.JSONFlags) error {
	o, err := f.Identity()
	if err != nil {
		return err
	}
	_, err = f.AppendFacts(j, facts.Simple(&facts.Fact{Kind: facts.KindPresence, Tool: o.Tool, Session: o.Session, Subject: subject}))
	return err
}

// Leave appends the caller's leave fact, which closes its claims; nothing
// when it is not in the room.
func Leave(f *cmdutil.Factory, subject string, j *cmdutil.JSONFlags) error {
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
			subj = fmt.Sprintf("leaving; closes %d claim(s)", n)
		}
		return []*facts.Fact{{Kind: facts.KindLeave, Tool: o.Tool, Session: o.Session, Subject: subj}}, nil
	})
	return err
}

// Whoami prints the identity writing commands would use.
func Whoami(f *cmdutil.Factory, j *cmdutil.JSONFlags) error {
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
