package facts

import (
	"fmt"
	"time"
)

// ReapItem is a claim the reaper may close or a handoff the 30-day sweep
// may expire.
type ReapItem struct {
	Kind   string // claim or handoff
	ID     string
	Owner  Owner
	Target string
	Reason string
	Scopes []string
	Since  time.Time // lease expiry, or the handoff's time
}

// ReapCandidates lists claims whose lease expired and whose owner has been
// silent for the lease window (never an active owner's), unresolved
// handoffs older than HandoffExpiry that were not swept yet, and a lead
// silent more than LeadSilence.
func (s *State) ReapCandidates(now time.Time) []ReapItem {
	var out []ReapItem
	for _, c := range s.ClaimViews(now) {
		if c.LeaseState != "expired" || c.OwnerState == Active {
			continue
		}
		last, _ := s.LastSeen(c.Fact.Owner())
		lease := time.Duration(c.Fact.LeaseS) * time.Second
		if lease <= 0 {
			lease = DefaultLease(c.Fact.Scopes)
		}
		if now.Sub(last) < lease {
			continue
		}
		out = append(out, ReapItem{Kind: "claim", ID: c.Fact.ID, Owner: c.Fact.Owner(), Scopes: c.Fact.Scopes,
			Reason: "lease-expired", Since: c.LeaseExpires})
	}
	for _, h := range s.sortedHandoffs() {
		if h.Expired != "" || now.Sub(h.Fact.Time()) < HandoffExpiry {
			continue
		}
		out = append(out, ReapItem{Kind: "handoff", ID: h.Fact.ID, Owner: h.Fact.Owner(), Target: h.Fact.Target,
			Reason: "handoff-expired", Since: h.Fact.Time()})
	}
	if it := s.staleLead(now); it != nil {
		out = append(out, *it)
	}
	return out
}

// Reap writes one claim.expired per reapable claim and one expiry per old
// handoff, authored by rally, recomputed under the lock.
func Reap() AppendFunc {
	return func(st *State, now time.Time) ([]*Fact, error) {
		var out []*Fact
		for _, it := range st.ReapCandidates(now) {
			switch it.Kind {
			case "claim":
				out = append(out, &Fact{Kind: KindClaimExpired, Tool: SystemTool, Ref: it.ID, Scopes: it.Scopes, Reason: it.Reason,
					Subject: fmt.Sprintf("reaper: claim %s of %s expired (lease ended %s, owner silent)", it.ID, it.Owner, FormatTime(it.Since))})
			case "handoff":
				days := int(now.Sub(it.Since).Hours() / 24)
				out = append(out, &Fact{Kind: KindResolve, Tool: SystemTool, Ref: it.ID, Status: "expired", Reason: it.Reason,
					Subject: fmt.Sprintf("reaper: handoff %s expired unanswered after %d days (from %s to %s)", it.ID, days, it.Owner.Tool, it.Target)})
			case "lead":
				out = append(out, staleLeadFact(it, now))
			}
		}
		return out, nil
	}
}
