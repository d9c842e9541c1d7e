package facts

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// The numbers of the protocol.
const (
	ActiveWindow    = 15 * time.Minute    // active while the latest fact is younger
	IdleWindow      = 2 * time.Hour       // idle while younger, stale beyond
	TakeoverSilence = 2 * time.Hour       // a takeover needs this much silence
	SmallLease      = 30 * time.Minute    // a claim of exactly one file
	LargeLease      = 120 * time.Minute   // any other claim
	InboxStale      = 24 * time.Hour      // an unanswered handoff is stale
	HandoffExpiry   = 30 * 24 * time.Hour // the sweep expires handoffs
)

// Liveness states.
const (
	Active = "active"
	Idle   = "idle"
	Stale  = "stale"
	Left   = "left"
)

// Liveness classifies an owner by the age of its latest fact.
func Liveness(last time.Time, left bool, now time.Time) string {
	if left {
		return Left
	}
	age := now.Sub(last)
	switch {
	case age < ActiveWindow:
		return Active
	case age < IdleWindow:
		return Idle
	}
	return Stale
}

// DefaultLease is 30 minutes for a claim of exactly one file, 120 otherwise.
func DefaultLease(scopes []string) time.Duration {
	if len(scopes) == 1 && strings.HasPrefix(scopes[0], "file:") {
		return SmallLease
	}
	return LargeLease
}

// LastSeen returns the time of the owner's latest fact.
func (s *State) LastSeen(o Owner) (time.Time, bool) {
	p := s.Peers[o.String()]
	if p == nil {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, p.LastAt)
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}

// OwnerState is the liveness of an owner now.
func (s *State) OwnerState(o Owner, now time.Time) string {
	p := s.Peers[o.String()]
	if p == nil {
		return Stale
	}
	t, _ := s.LastSeen(o)
	return Liveness(t, p.Left, now)
}

// LeaseExpires is when a claim's lease runs out: its window counted from
// the later of the claim's own time and its owner's latest fact, so the
// owner's activity renews it without any renewal fact.
func (s *State) LeaseExpires(c *Fact) time.Time {
	last, ok := s.LastSeen(c.Owner())
	return leaseExpires(c, last, ok)
}

// leaseExpires is LeaseExpires with the owner's latest fact looked up.
func leaseExpires(c *Fact, last time.Time, seen bool) time.Time {
	from := c.Time()
	if seen && last.After(from) {
		from = last
	}
	lease := time.Duration(c.LeaseS) * time.Second
	if lease <= 0 {
		lease = DefaultLease(c.Scopes)
	}
	return from.Add(lease)
}

// ConflictError is a claim refused because another owner holds an
// overlapping scope.
type ConflictError struct {
	Owner    Owner
	Scope    string // the holder's scope
	Wanted   string // the requested scope it overlaps
	ClaimID  string
	LastSeen time.Time
	State    string
	Hint     string
	// TakeoverAt is when --takeover becomes allowed (after TakeoverSilence).
	TakeoverAt time.Time
	// All is every conflicting claim, this one first.
	All []*ConflictError
	// Self is set when the holder is the caller's own tool under another
	// session (or none): one agent under two identities.
	Self bool
}

func (e *ConflictError) Error() string {
	if e.Self {
		return fmt.Sprintf("claim conflict: your tool holds %s as %s, another identity than this one (claim %s)", e.Scope, OwnerLabel(e.Owner), e.ClaimID)
	}
	return fmt.Sprintf("claim conflict: %s holds %s (claim %s)", e.Owner, e.Scope, e.ClaimID)
}

// OwnerLabel names an owner with its session, and says so when it has
// none: "claude_code:impl-1 (no session: a plain checkout)". Used where
// the caller is the same tool, so that it does not read "you hold it".
func OwnerLabel(o Owner) string {
	if o.Session == "" {
		return o.Tool + " (no session: a plain checkout)"
	}
	return o.Tool + "@" + o.Session + " (session " + o.Session + ")"
}

// SelfHint is what to do about a claim the caller's own tool holds under
// another identity: release it where it was made, never a handoff to
// itself.
func SelfHint(o Owner, claimID string) string {
	where := "from the main checkout (outside any session)"
	if o.Session != "" {
		where = "from session " + o.Session + "'s worktree"
	}
	return fmt.Sprintf("release it %s: `git rally release %s --tool %s`", where, claimID, o.Tool)
}

// Conflict is an open claim of another owner that a request overlaps.
type Conflict struct {
	Claim  *Fact
	Scope  string
	Wanted string
}

// Conflicts lists the open claims of other owners that conflict with the
// requested scopes and access, in (clock, id) order.
func (s *State) Conflicts(o Owner, scopes []string, access string) []Conflict {
	var out []Conflict
	for _, c := range s.Claims.Near(scopes) {
		if c.Owner() == o {
			continue
		}
		if theirs, mine, ok := ScopesConflict(c.Scopes, c.Access, scopes, access); ok {
			out = append(out, Conflict{Claim: c, Scope: theirs, Wanted: mine})
		}
	}
	return out
}

// Ago renders a duration for people: 42s, 5m, 3h10m, 2d4h.
func Ago(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		h := int(d.Hours())
		m := int(d.Minutes()) - 60*h
		if m == 0 {
			return fmt.Sprintf("%dh", h)
		}
		return fmt.Sprintf("%dh%dm", h, m)
	}
	days := int(d.Hours()) / 24
	return fmt.Sprintf("%dd%dh", days, int(d.Hours())-24*days)
}

// conflictError builds the refusal for the first conflict, with how
// recently the owner was active and what the caller can do next.
func (s *State) conflictError(c Conflict, me Owner, now time.Time) *ConflictError {
	o := c.Claim.Owner()
	last, _ := s.LastSeen(o)
	state := s.OwnerState(o, now)
	e := &ConflictError{Owner: o, Scope: c.Scope, Wanted: c.Wanted, ClaimID: c.Claim.ID, LastSeen: last, State: state,
		TakeoverAt: last.Add(TakeoverSilence)}
	var b strings.Builder
	fmt.Fprintf(&b, "%s was last active %s ago (%s); its lease ", o, Ago(now.Sub(last)), state)
	if exp := s.LeaseExpires(c.Claim); now.Before(exp) {
		fmt.Fprintf(&b, "runs until %s", FormatTime(exp))
	} else {
		fmt.Fprintf(&b, "expired at %s but an expired claim still blocks until released", FormatTime(exp))
	}
	if o.Tool == me.Tool {
		e.Self = true
		b.WriteString("\nnext: that is your own tool under another identity; " + SelfHint(o, c.Claim.ID))
	} else {
		b.WriteString("\nnext: wait and watch `git rally inbox`; ask for it with `git rally handoff --target " + o.Tool + " --subject \"need " + c.Scope + "\"`; or claim a narrower scope")
	}
	if allowed := last.Add(TakeoverSilence); now.Before(allowed) {
		fmt.Fprintf(&b, "; --takeover is allowed from %s (after 2h of silence)", FormatTime(allowed))
	} else {
		b.WriteString("; the owner has been silent for 2h or more: `git rally claim " + c.Wanted + " --takeover`")
	}
	e.Hint = b.String()
	return e
}

// sortedPeers returns peers by latest activity, newest first.
func (s *State) sortedPeers() []*Peer {
	out := make([]*Peer, 0, len(s.Peers))
	for _, p := range s.Peers {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[j].Last.Less(out[i].Last) })
	return out
}

// AppendFunc decides, under the ledger lock and against the current state,
// what to write. It returns the facts (without id, time or clock) or an
// error to refuse the write.
type AppendFunc func(st *State, now time.Time) ([]*Fact, error)
