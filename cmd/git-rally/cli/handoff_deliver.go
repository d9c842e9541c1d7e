package cli

import (
	"fmt"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/session"
)

// handoffAndDeliver records a handoff and, when its target is the tool of
// a live managed session, delivers it there as inject does (SPEC §13). A
// failed delivery leaves the handoff recorded and is reported.
func handoffAndDeliver(f *factory, j *jsonFlags, h *facts.Fact, sender facts.Owner) error {
	l, err := f.Ledger()
	if err != nil {
		return err
	}
	fs, err := l.Append(facts.Simple(h))
	f.Forget()
	if err != nil {
		return err
	}
	d, derr := deliverHandoff(f, fs[0], sender)
	if derr != nil {
		fmt.Fprintf(f.Err, "git-rally: warning: handoff %s is recorded but was not delivered: %v\n", fs[0].ID, derr)
	}
	if j.On() {
		out := map[string]any{"facts": cmdutil.RawFacts(fs)}
		if d != nil {
			out["delivery"] = d
		}
		if derr != nil {
			out["delivery_error"] = derr.Error()
		}
		return f.PrintJSON(j, out)
	}
	if err := f.WriteResult(j, fs); err != nil {
		return err
	}
	if d != nil && d.Queued {
		fmt.Fprintf(f.Out, "queued for session %s (%s): %s; it is handed over when the session is next idle at its prompt\n", ident(d.Session), ident(h.Target), d.Why)
	} else if d != nil {
		fmt.Fprintf(f.Out, "delivered to session %s (%s): %s, not yet acknowledged\n", ident(d.Session), ident(h.Target), session.DeliveryStatus)
	}
	return nil
}
