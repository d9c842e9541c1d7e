package session

import (
	"time"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/ledger"
)

// StartupWindow bounds how long `run` watches a session it just started
// for a host that dies at once (a binary that exits 1, a host refusing
// its arguments); HookedStartupWindow is the bound for a host rally
// installed hooks for and launches with its own command, whose first
// hook ends the watch (Claude Code's and Codex's SessionStart came 3 to 4
// seconds after the launch on a loaded machine).
var (
	StartupWindow       = 3 * time.Second
	HookedStartupWindow = 10 * time.Second
)

// Window is how long `run` watches this session's start.
func (p *Plan) Window() time.Duration {
	if p.install != "" && p.Hooks != "" {
		return HookedStartupWindow
	}
	return StartupWindow
}

// Startup is how a session's first moments went.
type Startup struct {
	// Exited: its program ended within the window; Ending says how.
	Exited bool
	Ending Ending
	// Reported: its host's hooks wrote a fact as the session's tool
	// (a first sign of life) before the window ended.
	Reported bool
}

// WatchStartup watches the session a Launch just started until its
// program has ended (Exited), its host's hooks have written a fact after
// the session fact (Reported), or window has passed (neither: it runs).
// A backend that cannot tell how a program ended (not an Ender) is not
// watched.
func WatchStartup(l *ledger.Ledger, b Backend, res *Launched, window time.Duration) Startup {
	e, ok := b.(Ender)
	if !ok || window <= 0 {
		return Startup{}
	}
	var launched *facts.Fact
	for _, f := range res.Facts {
		if f.Kind == facts.KindSession {
			launched = f
		}
	}
	p := res.Plan
	deadline := time.Now().Add(window)
	for i := 0; ; i++ {
		if end, ok, err := e.Ended(p.Target); err == nil && ok {
			return Startup{Exited: true, Ending: end}
		}
		// The ledger every fourth look: a hook's fact is slower news
		// than a dead pane.
		if launched != nil && i%4 == 3 {
			if st, err := l.Read(); err == nil && reportedSince(st, p.Tool, launched) {
				return Startup{Reported: true}
			}
		}
		if !time.Now().Before(deadline) {
			return Startup{}
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// reportedSince says whether tool wrote a fact after the session fact.
func reportedSince(st *facts.State, tool string, launched *facts.Fact) bool {
	after := facts.Key{Clock: launched.Clock, ID: launched.ID}
	for _, p := range st.Peers {
		if p.Tool == tool && after.Less(p.Last) {
			return true
		}
	}
	return false
}
