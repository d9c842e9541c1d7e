package facts

import (
	"sort"
	"time"
)

// PeerView is an owner's liveness now.
type PeerView struct {
	Tool, Session, State string
	LastSeen             time.Time
	Subject              string
	LastID               string // the fact that last showed it active
	// Activity is what it last said it is doing (§13), since when.
	Activity, ActivitySince string
}

// ClaimView is an open claim with its time-dependent state.
type ClaimView struct {
	Fact         *Fact
	LeaseExpires time.Time
	LeaseState   string // live or expired
	OwnerState   string
	Contested    bool
	HeldOver     string // the claim that holds against a contested one
}

// HandoffView is an unresolved handoff.
type HandoffView struct {
	Fact     *Fact
	State    string
	Overdue  bool
	Stale    bool
	Age      time.Duration
	Expired  bool
	Delivery string // the latest delivery's status, "" when never delivered
	Reason   string // the target's reason when it rejected the handoff
}

// Room is the live room at one moment.
type Room struct {
	Head      string
	Clock     int64
	Peers     []PeerView
	Claims    []ClaimView
	Handoffs  []HandoffView
	Blockers  []*Fact
	Risks     []*Fact
	Worktrees []*Fact
	// Lead holds the lead seat, "" when it is empty; LeadFact gave it.
	Lead      string
	LeadFact  *Fact
	Facts     int
	Retracted int
	ByKind    map[string]int
}

// Room computes the room at now.
func (s *State) Room(now time.Time) *Room {
	r := &Room{Head: s.Head, Clock: s.MaxClock, Facts: s.Facts, Retracted: s.Retracted, ByKind: s.ByKind}
	for _, p := range s.sortedPeers() {
		t, _ := time.Parse(time.RFC3339Nano, p.LastAt)
		r.Peers = append(r.Peers, PeerView{Tool: p.Tool, Session: p.Session, State: Liveness(t, p.Left, now), LastSeen: t, Subject: p.Subject, LastID: p.Last.ID,
			Activity: p.Activity, ActivitySince: p.ActivitySince})
	}
	r.Lead = s.LeadHolder()
	if r.Lead != "" {
		r.LeadFact = s.Lead
	}
	r.Claims = s.ClaimViews(now)
	for _, h := range s.sortedHandoffs() {
		if h.Expired != "" {
			continue
		}
		r.Handoffs = append(r.Handoffs, s.HandoffViewOf(h, now))
	}
	r.Blockers = sortedFacts(s.Blockers)
	r.Risks = sortedFacts(s.Risks)
	for _, f := range sortedFacts(s.Sessions) {
		if f.Status != "removed" && f.Path != "" {
			r.Worktrees = append(r.Worktrees, f)
		}
	}
	return r
}

// ClaimViews returns every open claim with lease, owner state and contest.
// Of two overlapping conflicting claims of different owners (possible only
// after a merge of ledgers that were apart), the lower (clock, id) holds
// and the other is contested.
func (s *State) ClaimViews(now time.Time) []ClaimView {
	claims := s.SortedClaims()
	out := make([]ClaimView, 0, len(claims))
	held := heldOver(claims, nil)
	type seen struct {
		last  time.Time
		ok    bool
		state string
	}
	owners := map[Owner]seen{} // a few owners hold most claims
	var prev Owner
	var w seen
	for i, c := range claims {
		if o := c.Owner(); i == 0 || o != prev { // runs of one owner's claims are common
			var ok bool
			if w, ok = owners[o]; !ok {
				w.last, w.ok = s.LastSeen(o)
				w.state = s.OwnerState(o, now)
				owners[o] = w
			}
			prev = o
		}
		exp := leaseExpires(c, w.last, w.ok)
		v := ClaimView{Fact: c, LeaseExpires: exp, LeaseState: "live", OwnerState: w.state}
		if !now.Before(exp) {
			v.LeaseState = "expired"
		}
		if h := held[i]; h >= 0 {
			v.Contested, v.HeldOver = true, claims[h].ID
		}
		out = append(out, v)
	}
	return out
}

func (s *State) HandoffViewOf(h *Handoff, now time.Time) HandoffView {
	age := now.Sub(h.Fact.Time())
	v := HandoffView{Fact: h.Fact, State: h.State(), Age: age, Expired: h.Expired != "", Delivery: h.Delivery}
	if h.Rejection != nil {
		v.Reason = h.Rejection.Reason
	}
	v.Stale = age > InboxStale || v.Expired
	if h.Fact.AckBy != "" && v.State == "open" {
		if t, err := time.Parse(time.RFC3339Nano, h.Fact.AckBy); err == nil && now.After(t) {
			v.Overdue = true
		}
	}
	return v
}

func (s *State) sortedHandoffs() []*Handoff {
	out := make([]*Handoff, 0, len(s.Handoffs()))
	for _, h := range s.Handoffs() {
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Fact.Key().Less(out[j].Fact.Key()) })
	return out
}

func sortedFacts(m map[string]*Fact) []*Fact {
	out := make([]*Fact, 0, len(m))
	for _, f := range m {
		out = append(out, f)
	}
	SortFacts(out)
	return out
}
