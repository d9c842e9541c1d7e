package ledgergen

import (
	"fmt"
	"time"

	"github.com/git-rally/git-rally/facts"
)

// OpenClaimOwners is how many owners hold the claims AddOpenClaims writes.
const OpenClaimOwners = 16

// AddOpenClaims appends n claims that are never released, at most 100 to
// a commit, all at time at: a room where many claims stay open (sessions
// that ended without a release, a large team). Each is a file of its own
// (claims/dNN/fNNNNN.go) held by one of OpenClaimOwners owners, so none
// conflicts with another, and none with the generated room's files.
func AddOpenClaims(l *facts.Ledger, n int, at time.Time) error {
	saved := l.Now
	defer func() { l.Now = saved }()
	at = at.UTC().Truncate(time.Millisecond)
	l.Now = func() time.Time { return at }
	for done := 0; done < n; {
		k := min(100, n-done)
		_, err := l.Append(func(st *facts.State, now time.Time) ([]*facts.Fact, error) {
			out := make([]*facts.Fact, k)
			for i := range out {
				j := done + i
				scopes := []string{fmt.Sprintf("file:claims/d%02d/f%05d.go", j%40, j)}
				out[i] = &facts.Fact{Kind: facts.KindClaim, Tool: fmt.Sprintf("bench:open-%02d", j%OpenClaimOwners),
					Scopes: scopes, Access: facts.Exclusive, LeaseS: int64(facts.DefaultLease(scopes) / time.Second),
					Subject: "left open"}
			}
			return out, nil
		})
		if err != nil {
			return fmt.Errorf("appending open claims: %w", err)
		}
		done += k
	}
	return nil
}
