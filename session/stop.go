package session

import (
	"fmt"
	"time"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/ledger"
	"github.com/git-rally/git-rally/worktree"
)

// Stopped is what stop did (or, dry, would do).
type Stopped struct {
	Session  *facts.Fact
	WasLive  bool     // its terminal was running and is ended
	Released []string // claim ids released
	Facts    []*facts.Fact
	Already  bool // stopped before: nothing written
}

// Stop ends a session: its terminal (only when it still runs; a session
// whose terminal is gone is closed in the ledger without touching any
// process), then one append of the session's stopped fact and a release
// of each claim it holds. The worktree stays.
func Stop(l *ledger.Ledger, b Backend, s *facts.Fact, dryRun bool) (*Stopped, error) {
	out := &Stopped{Session: s}
	if s.Status == StatusStopped {
		out.Already = true
		return out, nil
	}
	live, err := b.Live()
	if err != nil {
		return nil, err
	}
	out.WasLive = live[s.Target]
	// A terminal whose program exited is kept (remain-on-exit) until
	// stop: it ends with whatever that program left running.
	kept := false
	if e, ok := b.(Ender); ok && !out.WasLive && s.Target != "" {
		kept = e.Exists(s.Target)
	}
	owner := facts.Owner{Tool: s.Tool, Session: s.Session}
	build := func(st *facts.State) []*facts.Fact {
		cur := st.Sessions[s.Name]
		if cur == nil {
			cur = s
		}
		stop := *cur
		stop.ID, stop.At, stop.Clock, stop.Raw = "", "", 0, nil
		stop.Status, stop.Ref = StatusStopped, cur.ID
		stop.Subject = "stopped session " + s.Name
		var fs []*facts.Fact
		out.Released = nil
		for _, c := range st.OwnedClaims(owner) {
			out.Released = append(out.Released, c.ID)
			fs = append(fs, &facts.Fact{Kind: facts.KindRelease, Tool: owner.Tool, Session: owner.Session, Ref: c.ID,
				Scopes: c.Scopes, Reason: "session stopped"})
		}
		return append(fs, &stop)
	}
	if dryRun {
		st, err := l.Read()
		if err != nil {
			return nil, err
		}
		out.Facts = build(st)
		return out, nil
	}
	if out.WasLive || kept {
		if err := b.Kill(s.Target); err != nil {
			return nil, fmt.Errorf("ending %s: %w", s.Target, err)
		}
	}
	fs, err := l.Append(func(st *facts.State, now time.Time) ([]*facts.Fact, error) {
		if cur := st.Sessions[s.Name]; cur != nil && cur.Status == StatusStopped {
			out.Already = true
			return nil, nil
		}
		return build(st), nil
	})
	if err != nil {
		return nil, err
	}
	out.Facts = fs
	return out, nil
}

// Adopt records an existing terminal as a managed session with no
// worktree, so inject, capture and stop work on it.
func Adopt(l *ledger.Ledger, b Backend, name, target, agent, tool string) ([]*facts.Fact, error) {
	if err := worktree.CheckName(name); err != nil {
		return nil, err
	}
	if agent != "" {
		if h, ok := LookupHost(agent); ok {
			agent = h.Agent
		} else if err := checkLabel("--agent", agent); err != nil {
			return nil, err
		}
	}
	if tool == "" {
		family := name
		if h, ok := LookupHost(agent); ok {
			family = h.Family
		} else if agent != "" {
			family = agent
		}
		tool = family + ":" + name
		if family == name {
			tool = name
		}
	}
	if err := facts.CheckTool(tool); err != nil {
		return nil, err
	}
	if err := b.Available(); err != nil {
		return nil, err
	}
	pane, tsess, err := b.Resolve(target)
	if err != nil {
		return nil, &facts.UsageError{Msg: fmt.Sprintf("no %s pane %q: %v", b.Name(), facts.Sanitize(target, 80), err),
			Hint: "tmux list-panes -a -F '#{session_name}:#{window_index}.#{pane_index} #{pane_id}'"}
	}
	return l.Append(func(st *facts.State, now time.Time) ([]*facts.Fact, error) {
		if cur := st.Sessions[name]; cur != nil && cur.Status != StatusStopped && cur.Status != "removed" {
			return nil, &facts.RefusedError{Msg: fmt.Sprintf("session %s exists already (%s)", name, cur.Tool),
				Hint: "pick another name, or stop it first: git rally stop " + name}
		}
		return []*facts.Fact{{Kind: facts.KindSession, Tool: tool, Session: name, Name: name, Status: StatusLive,
			Agent: agent, Backend: b.Name(), Target: pane,
			Subject: fmt.Sprintf("adopted %s pane %s of session %s", b.Name(), pane, facts.Sanitize(tsess, 80))}}, nil
	})
}
