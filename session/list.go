package session

import (
	"fmt"
	"sort"
	"strings"

	"github.com/git-rally/git-rally/facts"
)

// Info is one managed session and its state now.
type Info struct {
	Fact      *facts.Fact // the session's latest session fact
	State     string      // live, exited or stopped
	StartedAt string
	LastSeen  string
	// Activity is what its agent last said it is doing (SPEC §13).
	Activity, ActivitySince string
	Ended                   *Ending // how an exited session's program ended, when its terminal kept it
}

// AddEndings reads, for each exited session, how its program ended from
// the terminal the backend kept (one call each; none for other states).
func AddEndings(b Backend, infos []Info) {
	e, ok := b.(Ender)
	if !ok {
		return
	}
	for i := range infos {
		if infos[i].State != StateExited || infos[i].Fact.Target == "" {
			continue
		}
		if end, ok, err := e.Ended(infos[i].Fact.Target); err == nil && ok {
			infos[i].Ended = &end
		}
	}
}

// Managed returns the managed sessions of the room (those a backend
// runs), oldest first.
func Managed(st *facts.State) []*facts.Fact {
	var out []*facts.Fact
	for _, f := range st.Sessions {
		if f.Backend != "" {
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key().Less(out[j].Key()) })
	return out
}

// StateOf is a session's state given the backend's live targets.
func StateOf(f *facts.Fact, live map[string]bool) string {
	switch {
	case f.Status == StatusStopped:
		return StateStopped
	case live[f.Target]:
		return StateLive
	}
	return StateExited
}

// List returns every managed session with its state. live comes from one
// Backend.Live call; started resolves the launch fact a stop refers to
// (nil: the stop's own time is shown).
func List(st *facts.State, live map[string]bool, started func(id string) string) []Info {
	var out []Info
	for _, f := range Managed(st) {
		in := Info{Fact: f, State: StateOf(f, live), StartedAt: f.At, LastSeen: f.At}
		if f.Status == StatusStopped && f.Ref != "" && started != nil {
			if at := started(f.Ref); at != "" {
				in.StartedAt = at
			}
		}
		if p := st.Peers[facts.Owner{Tool: f.Tool, Session: f.Session}.String()]; p != nil && p.LastAt > in.LastSeen {
			in.LastSeen = p.LastAt
		}
		in.Activity, in.ActivitySince = ActivityOf(st, f)
		if in.State != StateLive && in.Activity != "" && in.Activity != facts.ActivityExited {
			// Its host no longer runs: what it last said (needs-input,
			// working) no longer holds. A stopped session ended at its stop.
			in.Activity, in.ActivitySince = facts.ActivityExited, in.LastSeen
			if f.Status == StatusStopped {
				in.ActivitySince = f.At
			}
		}
		out = append(out, in)
	}
	return out
}

// Resolve finds a managed session by its id, its tool, or a unique prefix
// of either. An unknown or ambiguous name is a usage error.
func Resolve(st *facts.State, name string) (*facts.Fact, error) {
	all := Managed(st)
	for _, f := range all {
		if f.Name == name || f.Tool == name {
			return f, nil
		}
	}
	var hits []*facts.Fact
	for _, f := range all {
		if name != "" && (strings.HasPrefix(f.Name, name) || strings.HasPrefix(f.Tool, name)) {
			hits = append(hits, f)
		}
	}
	switch len(hits) {
	case 1:
		return hits[0], nil
	case 0:
		return nil, &facts.UsageError{Msg: fmt.Sprintf("no managed session %q", facts.Sanitize(name, 80)), Hint: "git rally sessions"}
	}
	names := make([]string, len(hits))
	for i, f := range hits {
		names[i] = f.Name
	}
	return nil, &facts.UsageError{Msg: fmt.Sprintf("session %q is ambiguous: %s", facts.Sanitize(name, 80), strings.Join(names, ", ")),
		Hint: "git rally sessions"}
}

// LiveFor returns the live managed session whose tool is tool, if any.
func LiveFor(st *facts.State, live map[string]bool, tool string) *facts.Fact {
	var found *facts.Fact
	for _, f := range Managed(st) {
		if f.Tool == tool && StateOf(f, live) == StateLive {
			found = f // the newest wins
		}
	}
	return found
}
