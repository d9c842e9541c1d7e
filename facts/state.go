package facts

import (
	"errors"
	"sort"
	"time"
)

// ErrRebuild asks for a projection from scratch: an incremental step met a
// fact whose effect it cannot undo in place (the retraction of a release).
var ErrRebuild = errors.New("projection needs a rebuild")

// Peer is the latest activity of one owner.
type Peer struct {
	Tool    string `json:"tool"`
	Session string `json:"session,omitempty"`
	LastAt  string `json:"last_at"`
	Last    Key    `json:"last"`
	Left    bool   `json:"left,omitempty"`
	Subject string `json:"subject,omitempty"`
	// Activity is what the owner last said it is doing (a status fact,
	// §13), ActivitySince when it said so.
	Activity      string `json:"activity,omitempty"`
	ActivitySince string `json:"activity_since,omitempty"`
}

// Handoff is a handoff that is not resolved yet.
type Handoff struct {
	Fact    *Fact             `json:"fact"`
	Answers map[string]string `json:"answers,omitempty"` // answer id -> kind, target-authored
	Expired string            `json:"expired,omitempty"` // rally's sweep fact
	Overdue string            `json:"overdue,omitempty"` // the no-response risk
	// Delivery is the status of the latest delivery of the handoff to a
	// managed session (sent_unverified); delivery is not an answer.
	Delivery string `json:"delivery,omitempty"`
	// Answerer is who answered it: its target, or for a handoff to
	// AllTarget the first peer whose answer counted.
	Answerer string `json:"answerer,omitempty"`
	// Rejection is the target's receipt that refused it (status
	// rejected, with a reason), nil when not rejected.
	Rejection *Fact `json:"rejection,omitempty"`
}

// Rejected is the state of a handoff its target refused, and the status
// of the receipt that refuses it.
const Rejected = "rejected"

// AllTarget addresses a handoff to every peer but its sender.
const AllTarget = "all"

// AddressedTo reports whether handoff h waits for tool's answer: its
// target, or any peer but the sender when the target is all.
func AddressedTo(h *Fact, tool string) bool {
	if h.Target == AllTarget {
		return tool != h.Tool && tool != SystemTool
	}
	return h.Target == tool
}

// AnsweredBy is who answered the handoff, "" while nobody has.
func (h *Handoff) AnsweredBy() string {
	if h.Answerer != "" {
		return h.Answerer
	}
	if len(h.Answers) > 0 {
		return h.Fact.Target // a projection cached before Answerer existed
	}
	return ""
}

// mayAnswer reports whether tool's answer counts: the target's, or for a
// handoff to all, the first answering peer's and then only that peer's.
func (h *Handoff) mayAnswer(tool string) bool {
	if !AddressedTo(h.Fact, tool) {
		return false
	}
	by := h.AnsweredBy()
	return by == "" || by == tool
}

// State reports the handoff's state: open, acknowledged, rejected,
// resolved or expired.
func (h *Handoff) State() string {
	st := "open"
	for _, k := range h.Answers {
		if k == KindResolve || k == KindArtifact {
			return "resolved"
		}
		st = "acknowledged"
	}
	if h.Rejection != nil {
		return Rejected
	}
	if st == "open" && h.Expired != "" {
		return "expired"
	}
	return st
}

// Artifact is an artifact addressed to someone who has not acknowledged it.
type Artifact struct {
	Fact *Fact  `json:"fact"`
	For  string `json:"for"`
}

// State is the projection of a ledger that does not depend on the time:
// what is open, who was last seen when, and counts. Time-dependent views
// (liveness, leases, staleness) are computed from it by Room.
type State struct {
	Head     string `json:"head"`
	Tree     string `json:"tree"`
	Last     Key    `json:"last"`
	MaxClock int64  `json:"max_clock"`
	Newest   string `json:"newest"` // the latest at of any fact

	Facts     int            `json:"facts"`
	Retracted int            `json:"retracted"`
	ByKind    map[string]int `json:"by_kind"`
	Bad       int            `json:"bad,omitempty"`
	// Damaged marks a projection whose cached parts did not decode.
	Damaged bool `json:"-"`
	// Held counts the facts held back because they are dated more than
	// FutureSkew after the reader's clock: counted, never acted on, until
	// their time is no longer in the future. HeldFirst is the earliest of
	// their times (Unix nanoseconds): when it comes due, the projection is
	// built again and holds back what is still ahead. Only the number and
	// the earliest time are kept, so a stream of future-dated facts costs
	// the cache nothing per fact. horizon is the reader's clock plus
	// FutureSkew while facts are applied (zero: nothing is held back).
	Held      int   `json:"held,omitempty"`
	HeldFirst int64 `json:"held_first,omitempty"`
	horizon   time.Time
	// shared is set while ApplyBuiltShared applies a fact the caller
	// reuses: a string of it the projection keeps is copied.
	shared bool

	Peers map[string]*Peer `json:"peers"`
	// Claims are the open claims (claimset.go).
	Claims ClaimSet `json:"claims"`
	// handoffs are the unresolved handoffs by id (see Handoffs), or
	// pending, their encoding not decoded yet.
	handoffs   map[string]*Handoff
	pending    *PendingHandoffs
	Blockers   map[string]*Fact       `json:"blockers"`
	Risks      map[string]*Fact       `json:"risks"`
	Sessions   map[string]*Fact       `json:"sessions"`
	Artifacts  map[string]*Artifact   `json:"artifacts"`
	Retraction map[string]string      `json:"retraction"` // retracted id -> retract id
	Contest    map[string]string      `json:"contest"`    // contested claim id -> risk id
	Plans      map[string]*PlanRecord `json:"plans"`      // plan fact id -> plan (plan.go)
	// Lead is the latest lead fact (lead.go); its target holds the seat.
	Lead *Fact `json:"lead,omitempty"`
}

// Handoffs returns the unresolved handoffs by id; the caller may change
// the map only inside this package. A projection loaded from the cache
// decodes them on first use, so an append or a write check, which never
// looks at them, does not pay for a room with many waiting handoffs.
func (s *State) Handoffs() map[string]*Handoff {
	if s.handoffs == nil {
		m, err := map[string]*Handoff{}, error(nil)
		if s.pending != nil && len(s.pending.Enc) > 0 {
			m, err = s.pending.Decode(s.pending.Enc)
		}
		if err != nil {
			// The bytes passed their checksum and their content hash
			// when the cache was loaded: only a bug in this version gets
			// here. The projection is marked so that it is not saved.
			m, s.Damaged = map[string]*Handoff{}, true
		}
		s.handoffs, s.pending = m, nil
	}
	return s.handoffs
}

// PendingHandoffs is a projection's handoffs as the ledger's cache
// stored them, decoded by Decode on first use (State.Handoffs).
type PendingHandoffs struct {
	Enc    []byte
	File   string // the cache file they came from, "" when none
	Decode func([]byte) (map[string]*Handoff, error)
}

// SetPendingHandoffs replaces the projection's handoffs by p, decoded
// when first asked for.
func (s *State) SetPendingHandoffs(p *PendingHandoffs) { s.handoffs, s.pending = nil, p }

// Pending returns the handoffs not decoded yet, nil once they are.
func (s *State) Pending() *PendingHandoffs {
	if s.handoffs != nil {
		return nil
	}
	return s.pending
}

// NewState returns the projection of an empty ledger.
func NewState() *State {
	s := &State{}
	s.Init()
	return s
}

func (s *State) Init() {
	if s.ByKind == nil {
		s.ByKind = map[string]int{}
	}
	if s.Peers == nil {
		s.Peers = map[string]*Peer{}
	}
	if s.handoffs == nil && s.pending == nil {
		s.handoffs = map[string]*Handoff{}
	}
	if s.Blockers == nil {
		s.Blockers = map[string]*Fact{}
	}
	if s.Risks == nil {
		s.Risks = map[string]*Fact{}
	}
	if s.Sessions == nil {
		s.Sessions = map[string]*Fact{}
	}
	if s.Artifacts == nil {
		s.Artifacts = map[string]*Artifact{}
	}
	if s.Retraction == nil {
		s.Retraction = map[string]string{}
	}
	if s.Contest == nil {
		s.Contest = map[string]string{}
	}
	if s.Plans == nil {
		s.Plans = map[string]*PlanRecord{}
	}
}

// SortFacts orders facts by (clock, id).
func SortFacts(fs []*Fact) {
	sort.Slice(fs, func(i, j int) bool { return fs[i].Key().Less(fs[j].Key()) })
}

// Build projects a whole set of facts from scratch. Retractions are
// resolved first, so a retracted fact has no effect whatever its position.
func Build(all []*Fact) *State { return BuildAt(all, time.Time{}) }

// BuildAt is Build by a reader whose clock plus FutureSkew is horizon:
// facts dated after it are held back (see State.Held).
func BuildAt(all []*Fact, horizon time.Time) *State {
	SortFacts(all)
	s := NewState()
	s.horizon = horizon
	byID := make(map[string]*Fact, len(all))
	for _, f := range all {
		byID[f.ID] = f
	}
	for _, f := range all {
		if f.Kind != KindRetract || f.Ref == "" {
			continue
		}
		if t := byID[f.Ref]; t != nil && t.Tool == f.Tool {
			if _, done := s.Retraction[t.ID]; !done {
				s.Retraction[t.ID] = f.ID
			}
		}
	}
	for _, f := range all {
		s.ApplyBuilt(f)
	}
	s.Forget()
	return s
}

// Apply adds facts that all come after every fact applied so far. It
// returns errRebuild when the facts are out of order or undo something the
// state no longer holds.
func (s *State) Apply(fs []*Fact) error {
	SortFacts(fs)
	for _, f := range fs {
		if !s.Last.Less(f.Key()) {
			return ErrRebuild
		}
		if s.held(f) {
			continue
		}
		if f.Kind == KindRetract && f.Ref != "" {
			if err := s.retract(f); err != nil {
				return err
			}
			s.count(f)
			continue
		}
		s.count(f)
		if _, gone := s.Retraction[f.ID]; gone {
			continue
		}
		s.apply(f)
	}
	s.Forget()
	return nil
}

// held reports (and records) a fact dated after the horizon. It counts
// in the totals and the clock, never as anyone's activity.
func (s *State) held(f *Fact) bool {
	if s.horizon.IsZero() || !f.Time().After(s.horizon) {
		return false
	}
	if at := f.Time().UnixNano(); s.Held == 0 || at < s.HeldFirst {
		s.HeldFirst = at
	}
	s.Held++
	s.Facts++
	s.ByKind[s.kindKey(f.Kind)]++
	if f.Clock > s.MaxClock {
		s.MaxClock = f.Clock
	}
	if s.Last.Less(f.Key()) {
		s.Last, _ = s.keyAt(f)
	}
	return true
}

// FutureDue reports whether a held-back fact is no longer in the future
// for a reader whose clock plus FutureSkew is horizon: the projection
// must be built again.
func (s *State) FutureDue(horizon time.Time) bool {
	return s.Held > 0 && s.HeldFirst <= horizon.UnixNano()
}

// SetHorizon sets the reader's clock plus FutureSkew for the next Apply.
func (s *State) SetHorizon(h time.Time) { s.horizon = h }

func (s *State) count(f *Fact) {
	s.Facts++
	s.ByKind[s.kindKey(f.Kind)]++
	if f.Kind == KindRetract {
		s.Retracted++
	}
	if f.Clock > s.MaxClock {
		s.MaxClock = f.Clock
	}
	key, at := s.keyAt(f)
	if s.Last.Less(key) {
		s.Last = key
	}
	if at > s.Newest && f.Time().After(time.Time{}) {
		s.Newest = at
	}
	s.touch(f, key, at)
}

// PeerForget is how long after the ledger's newest fact a silent owner
// that holds no claim stays listed as a peer. Forgetting it keeps the
// projection (and every command's start-up) bounded by who is around, not
// by everyone who ever entered.
const PeerForget = 24 * time.Hour

// NoticeForget is how long after the ledger's newest fact an artifact
// waiting for review stays in the room. It stays in the log; the room is
// what is live. Risks and blockers stay until resolved or retracted,
// however old (SPEC §8).
const NoticeForget = 7 * 24 * time.Hour

func shareScope(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

// OwnedClaims returns the open claims of an owner, oldest first.
func (s *State) OwnedClaims(o Owner) []*Fact { return s.Claims.Owned(o) }

// SortedClaims returns the open claims in (clock, id) order.
func (s *State) SortedClaims() []*Fact { return s.Claims.All() }

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := make(map[string]bool, len(a))
	for _, x := range a {
		m[x] = true
	}
	for _, y := range b {
		if !m[y] {
			return false
		}
	}
	return true
}
