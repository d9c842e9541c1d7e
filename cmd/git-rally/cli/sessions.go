package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"github.com/git-rally/git-rally/facts"

	"github.com/git-rally/git-rally/session"
)

type sessionsOptions struct{ j jsonFlags }

type sessionJSON struct {
	Session   string `json:"session"`
	Tool      string `json:"tool"`
	Agent     string `json:"agent"`
	Backend   string `json:"backend"`
	Target    string `json:"target"`
	Worktree  string `json:"worktree"`
	Branch    string `json:"branch"`
	State     string `json:"state"`
	StartedAt string `json:"started_at"`
	LastSeen  string `json:"last_seen"`
	// An exited session whose terminal kept its end: its exit status
	// and last line (sanitized).
	ExitStatus *int   `json:"exit_status,omitempty"`
	LastLine   string `json:"last_line,omitempty"`
	// Activity is what the session's agent last said it is doing
	// (SPEC §13: working, needs-input, idle, exited...), since when.
	Activity      string `json:"activity,omitempty"`
	ActivitySince string `json:"activity_since,omitempty"`
}

func newCmdSessions(f *factory) *cobra.Command {
	opts := &sessionsOptions{}
	c := &cobra.Command{
		Use:   "sessions",
		Short: "The managed sessions of this room and whether their terminals run (live, exited, stopped)",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, args []string) error { return runSessions(f, opts) },
	}
	addJSONFlags(c, &opts.j)
	return c
}

// sessionsList reads the managed sessions with their state: one call to
// the backend for all of them, none when no session can be running.
func sessionsList(f *factory) ([]session.Info, error) {
	st, err := f.State()
	if err != nil {
		return nil, err
	}
	b, err := newBackend("")
	if err != nil {
		return nil, err
	}
	live, err := liveTargets(b, st)
	if err != nil {
		return nil, err
	}
	l, err := f.Ledger()
	if err != nil {
		return nil, err
	}
	started := func(id string) string {
		if fa, err := l.Find(id); err == nil {
			return fa.At
		}
		return ""
	}
	infos := session.List(st, live, started)
	session.AddEndings(b, infos)
	return infos, nil
}

func toSessionJSON(in session.Info) sessionJSON {
	s := in.Fact
	out := sessionJSON{Session: s.Name, Tool: s.Tool, Agent: s.Agent, Backend: s.Backend, Target: s.Target,
		Worktree: s.Worktree, Branch: s.Branch, State: in.State, StartedAt: in.StartedAt, LastSeen: in.LastSeen,
		Activity: in.Activity, ActivitySince: in.ActivitySince}
	if e := in.Ended; e != nil {
		status := e.Status
		out.ExitStatus, out.LastLine = &status, facts.Sanitize(e.LastLine, 400)
	}
	return out
}

func runSessions(f *factory, opts *sessionsOptions) error {
	infos, err := sessionsList(f)
	if err != nil {
		return err
	}
	out := struct {
		Sessions []sessionJSON `json:"sessions"`
	}{Sessions: []sessionJSON{}}
	for _, in := range infos {
		out.Sessions = append(out.Sessions, toSessionJSON(in))
	}
	if opts.j.On() {
		return f.PrintJSON(&opts.j, out)
	}
	if len(out.Sessions) == 0 {
		fmt.Fprintln(f.Out, "no managed sessions; start one: git rally run codex --task \"...\"")
		return nil
	}
	now := f.MustNow()
	for _, s := range out.Sessions {
		where := s.Worktree
		if where == "" {
			where = "(adopted " + s.Target + ")"
		}
		fmt.Fprintf(f.Out, "%-20s %-24s %-7s %-8s %s, seen %s%s\n", ident(s.Session), ident(s.Tool), s.State, ident(s.Agent), ident(where), ago(now, s.LastSeen),
			cmdutil.ActivityTag(f.Paint(), now, s.Activity, s.ActivitySince))
		if s.ExitStatus != nil {
			fmt.Fprintf(f.Out, "%-20s exit status %d: %s   (git rally capture %s)\n", "", *s.ExitStatus, ident(s.LastLine), ident(s.Session))
		}
	}
	return nil
}
