package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/plan"
	"github.com/git-rally/git-rally/session"
)

// plural is n and what, plural unless n is 1.
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// roomSessionJSON is a managed session as the room lists it (SPEC §8).
type roomSessionJSON struct {
	Session  string `json:"session"`
	Tool     string `json:"tool"`
	Agent    string `json:"agent"`
	State    string `json:"state"`
	Worktree string `json:"worktree"`
	// Activity is what its agent last said it is doing (SPEC §13).
	Activity      string `json:"activity,omitempty"`
	ActivitySince string `json:"activity_since,omitempty"`
}

// roomSessions are the room's managed sessions; it asks tmux only when
// one of them may be running.
func roomSessions(st *facts.State) []roomSessionJSON {
	out := []roomSessionJSON{}
	b, err := newBackend("")
	if err != nil {
		return out
	}
	live, err := liveTargets(b, st)
	if err != nil {
		live = map[string]bool{}
	}
	for _, in := range session.List(st, live, nil) {
		out = append(out, roomSessionJSON{Session: in.Fact.Name, Tool: in.Fact.Tool, Agent: in.Fact.Agent, State: in.State, Worktree: in.Fact.Worktree,
			Activity: in.Activity, ActivitySince: in.ActivitySince})
	}
	return out
}

// roomPlanJSON is an open plan as the room lists it.
type roomPlanJSON struct {
	Plan     string         `json:"plan"`
	Fact     string         `json:"fact"`
	Lead     string         `json:"lead"`
	Done     int            `json:"done"`
	Total    int            `json:"total"`
	ByState  map[string]int `json:"by_state"`
	CanClose bool           `json:"can_close"`
}

func roomPlans(st *facts.State) []roomPlanJSON {
	var out []roomPlanJSON
	for _, b := range plan.OpenBoards(st) {
		rp := roomPlanJSON{Plan: b.Plan.ID, Fact: b.Record.Fact.ID, Lead: b.Record.Lead(), Done: b.Done, Total: b.Total,
			CanClose: b.CanClose, ByState: map[string]int{}}
		for _, v := range b.Tasks {
			rp.ByState[v.State]++
		}
		out = append(out, rp)
	}
	return out
}

// newBackend is the terminal backend a --backend value names: tmux, or
// auto (which is tmux); anything else is a usage error.
func newBackend(name string) (session.Backend, error) {
	if demoTerminal != nil {
		return demoTerminal, nil
	}
	switch name {
	case "", "auto", "tmux":
		t := &session.Tmux{}
		if self, err := os.Executable(); err == nil {
			t.Keeper = self // the pane keeps its program's last output
		}
		return t, nil
	}
	return nil, &cmdutil.UsageError{Msg: "unknown backend " + quoteName(name) + ": rally runs sessions in tmux", Hint: "--backend tmux"}
}

// demoTerminal, set while demo plays a managed receiver, stands in for
// every terminal backend: the run needs no tmux and prints the same every
// time. Nothing else sets it.
var demoTerminal session.Backend

func printRoomPlans(w io.Writer, ps []roomPlanJSON) {
	if len(ps) == 0 {
		return
	}
	fmt.Fprintf(w, "\nplans (%d)\n", len(ps))
	for _, p := range ps {
		var parts []string
		for _, s := range []string{plan.Waiting, plan.Ready, plan.Taken, plan.Done} {
			if n := p.ByState[s]; n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", n, s))
			}
		}
		extra := ""
		if p.CanClose {
			extra = ", can close"
		}
		fmt.Fprintf(w, "  %-16s lead %s: %s%s\n", facts.Sanitize(p.Plan, 64), facts.Sanitize(p.Lead, 128), strings.Join(parts, ", "), extra)
	}
}

func printRoomSessions(w io.Writer, ss []roomSessionJSON) {
	if len(ss) == 0 {
		return
	}
	fmt.Fprintf(w, "\nsessions (%d)\n", len(ss))
	for _, s := range ss {
		act := ""
		if s.Activity != "" {
			act = " (" + facts.Sanitize(s.Activity, 40) + ")"
		}
		fmt.Fprintf(w, "  %-20s %-24s %-7s %s%s\n", ident(s.Session), ident(s.Tool), s.State, ident(s.Worktree), act)
	}
}

// liveTargets asks the backend once which targets live; only when the
// room has a managed session that may be running, so a room without
// any costs no process.
func liveTargets(b session.Backend, st *facts.State) (map[string]bool, error) {
	need := false
	for _, s := range session.Managed(st) {
		if s.Status != session.StatusStopped {
			need = true
			break
		}
	}
	if !need {
		return map[string]bool{}, nil
	}
	if err := b.Available(); err != nil {
		return map[string]bool{}, nil // nothing can run without it
	}
	return b.Live()
}

func quoteName(s string) string { return "\"" + facts.Sanitize(s, 80) + "\"" }

// ident sanitizes an identifier for human output.
func ident(s string) string { return facts.Sanitize(s, 160) }
