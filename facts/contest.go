package facts

import (
	"fmt"
	"strings"
	"time"
)

// ContestedSubject starts the subject of the risk that records a contested
// claim; State.Contest remembers such risks by the claim they refer to.
const ContestedSubject = "claim-contested"

// Contest is a claim that does not hold: another owner's conflicting claim
// came first in (clock, id) order. It happens only when two ledgers that
// were apart are merged; an append refuses the second claim.
type Contest struct {
	Claim  *Fact  // the contested claim
	Holder *Fact  // the claim that holds against it
	Scope  string // the contested claim's scope that overlaps the holder's
	Risk   string // the claim-contested risk, "" when none is recorded yet
}

// Contests lists the open contested claims in (clock, id) order.
func (s *State) Contests() []Contest {
	var out []Contest
	for _, v := range s.ClaimViews(time.Time{}) {
		if !v.Contested {
			continue
		}
		c := Contest{Claim: v.Fact, Risk: s.Contest[v.Fact.ID]}
		for _, h := range s.SortedClaims() {
			if h.ID == v.HeldOver {
				c.Holder = h
				_, c.Scope, _ = ScopesConflict(h.Scopes, h.Access, v.Fact.Scopes, v.Fact.Access)
				break
			}
		}
		out = append(out, c)
	}
	return out
}

// ContestRisks records each contested claim that has no claim-contested
// risk yet: one risk authored by rally, ref = the contested claim, target =
// its owner, both claim ids in the evidence. It runs under the ledger lock
// against the merged state, so two syncs in one clone never write two, and
// sync pushes the risk with the merge that revealed the contest, so a clone
// that later receives both claims receives the risk too and writes nothing.
//
// Two clones can still meet the same contest at the same moment, each
// before the other's push. The remote's compare-and-swap decides: the
// loser's push is rejected, and on its next round its own risk (listed in
// pending: written here, not pushed yet) meets the winner's. Then it
// retracts its own, in the same commit, before it pushes; the room shows
// one risk everywhere.
//
// mine, when not nil, says which claims were made in this clone: only
// their contests are recorded here (contestowner.go).
func ContestRisks(pending []string, mine func(claimID string) bool) AppendFunc {
	return func(st *State, now time.Time) ([]*Fact, error) {
		var out []*Fact
		for _, id := range pending {
			mine := st.Risks[id]
			if mine == nil || mine.Tool != SystemTool || !strings.HasPrefix(mine.Subject, ContestedSubject) {
				continue // gone (retracted, resolved) or not a contest risk
			}
			for _, other := range sortedFacts(st.Risks) {
				if other.ID == mine.ID || other.Ref != mine.Ref || !strings.HasPrefix(other.Subject, ContestedSubject) || containsStr(pending, other.ID) {
					continue
				}
				out = append(out, &Fact{Kind: KindRetract, Tool: SystemTool, Ref: mine.ID,
					Reason: fmt.Sprintf("duplicate: %s records the same contest and was published first", other.ID)})
				break
			}
		}
		for _, c := range st.Contests() {
			if c.Risk != "" || c.Holder == nil || mine != nil && !mine(c.Claim.ID) {
				continue
			}
			out = append(out, &Fact{
				Kind: KindRisk, Tool: SystemTool, Ref: c.Claim.ID, Target: c.Claim.Tool, Severity: "warn",
				Subject: fmt.Sprintf("%s: claim %s by %s conflicts with claim %s by %s, which comes first in (clock, id) order and holds",
					ContestedSubject, c.Claim.ID, c.Claim.Owner(), c.Holder.ID, c.Holder.Owner()),
				Scopes: []string{c.Scope},
				Evidence: []string{
					fmt.Sprintf("contested: claim %s by %s on %s (clock %d)", c.Claim.ID, c.Claim.Owner(), strings.Join(c.Claim.Scopes, " "), c.Claim.Clock),
					fmt.Sprintf("holds: claim %s by %s on %s (clock %d)", c.Holder.ID, c.Holder.Owner(), strings.Join(c.Holder.Scopes, " "), c.Holder.Clock),
				},
				Body: fmt.Sprintf("The two claims were made while their clones were apart and met in a sync; of two conflicting claims "+
					"the lower (clock, id) holds. %s should release %s (git rally release %s) or agree a handoff with %s.",
					c.Claim.Owner(), c.Claim.ID, c.Claim.ID, c.Holder.Owner()),
			})
		}
		return out, nil
	}
}
