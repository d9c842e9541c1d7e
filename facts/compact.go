package facts

import (
	"encoding/json"
	"time"
)

// CompactCap caps peer text in the compact room.
const CompactCap = 200

// Compact is the part of the room one caller must act on, within a byte
// budget. Handoffs to the caller and claims on the requested paths are
// never cut; blockers, the caller's own claims, other claims (newest
// first) and up to 8 peers are added while the budget allows.
type Compact struct {
	Tool     string
	Paths    []string
	Head     string
	Clock    int64
	Lead     string // the lead seat's holder, "" when empty
	Claims   []ClaimView
	Handoffs []HandoffView
	Blockers []*Fact
	Peers    []PeerView
	Omitted  map[string]int
}

// MaxCompactPeers and MaxCompactOthers bound the peers and the other
// owners' claims the compact room lists, whatever the budget: a crowded
// room's compact view stays a short read.
const (
	MaxCompactPeers  = 8
	MaxCompactOthers = 8
)

// CompactRoom selects items for me. size reports the encoded size of a
// candidate selection; the caller's encoder decides the bytes.
func (s *State) CompactRoom(me Owner, scopes []string, budget int, now time.Time, size func(*Compact) int) *Compact {
	room := s.Room(now)
	c := &Compact{Tool: me.Tool, Paths: scopes, Head: room.Head, Clock: room.Clock, Lead: room.Lead, Omitted: map[string]int{}}
	var onPath, own, others []ClaimView
	for _, cl := range room.Claims {
		switch {
		case len(scopes) > 0 && touches(cl.Fact.Scopes, scopes):
			onPath = append(onPath, cl)
		case cl.Fact.Owner() == me:
			own = append(own, cl)
		default:
			others = append(others, cl)
		}
	}
	c.Claims = onPath
	for _, h := range room.Handoffs {
		if AddressedTo(h.Fact, me.Tool) {
			c.Handoffs = append(c.Handoffs, h)
		}
	}
	for _, h := range s.Inbox([]string{me.Tool}, now) {
		if h.Stale && s.Handoffs()[h.Fact.ID] != nil && s.Handoffs()[h.Fact.ID].Expired != "" {
			c.Handoffs = append(c.Handoffs, HandoffView{Fact: h.Fact, State: h.State, Stale: true, Age: h.Age, Expired: true})
		}
	}
	c.Omitted["handoffs"] = len(room.Handoffs) - countTo(room.Handoffs, me.Tool)
	fits := func() bool { return size(c) <= budget }
	// Optional items, most important first; each is kept only if it fits.
	for _, b := range room.Blockers {
		c.Blockers = append(c.Blockers, b)
		if !fits() {
			c.Blockers = c.Blockers[:len(c.Blockers)-1]
			c.Omitted["blockers"]++
		}
	}
	for _, cl := range own {
		c.Claims = append(c.Claims, cl)
		if !fits() {
			c.Claims = c.Claims[:len(c.Claims)-1]
			c.Omitted["claims"]++
		}
	}
	shown := 0
	for i := len(others) - 1; i >= 0; i-- { // newest first
		if shown >= MaxCompactOthers {
			c.Omitted["claims"]++
			continue
		}
		c.Claims = append(c.Claims, others[i])
		if !fits() {
			c.Claims = c.Claims[:len(c.Claims)-1]
			c.Omitted["claims"]++
			continue
		}
		shown++
	}
	peers := 0
	for _, p := range room.Peers {
		if p.Tool == me.Tool && p.Session == me.Session {
			continue
		}
		if peers >= MaxCompactPeers || p.State == Left {
			c.Omitted["peers"]++
			continue
		}
		c.Peers = append(c.Peers, p)
		if !fits() {
			c.Peers = c.Peers[:len(c.Peers)-1]
			c.Omitted["peers"]++
			continue
		}
		peers++
	}
	c.Omitted["risks"] = len(room.Risks)
	return c
}

func touches(a, b []string) bool {
	_, _, ok := ScopesConflict(a, Exclusive, b, Exclusive)
	return ok
}

func countTo(hs []HandoffView, tool string) int {
	n := 0
	for _, h := range hs {
		if AddressedTo(h.Fact, tool) {
			n++
		}
	}
	return n
}

// JSONSize is the compact encoded size of v.
func JSONSize(v any) int {
	b, _ := json.Marshal(v)
	return len(b)
}
