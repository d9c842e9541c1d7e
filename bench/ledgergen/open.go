package ledgergen

import (
	"fmt"
	"time"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/ledger"
)

// SetOpenClaims appends to the ledger until exactly n claims are open: it
// releases the newest open claims when there are more, and claims distinct
// files (src/open/DDD/NNNN.go, spread over the room's tools, none
// overlapping another) when there are fewer, at most batch facts per
// commit. It returns how many facts it appended. A room of 20 open claims
// and one of 1,619 built from the same ledger differ only in their claims.
func SetOpenClaims(l *ledger.Ledger, n, batch int) (int, error) {
	if batch <= 0 || batch > 200 {
		batch = 100
	}
	added := 0
	for next := 0; ; {
		st, err := l.Read()
		if err != nil {
			return added, err
		}
		open := st.SortedClaims()
		var fs []*facts.Fact
		switch {
		case len(open) > n:
			for i := len(open) - 1; i >= n && len(fs) < batch; i-- {
				c := open[i]
				fs = append(fs, &facts.Fact{Kind: facts.KindRelease, Tool: c.Tool, Session: c.Session, Ref: c.ID,
					Scopes: c.Scopes, Reason: "bench: open claims"})
			}
		case len(open) < n:
			held := map[string]bool{}
			for _, c := range open {
				for _, sc := range c.Scopes {
					held[sc] = true
				}
			}
			for i := len(open); i < n && len(fs) < batch; i++ {
				scopes := []string{fmt.Sprintf("file:src/open/d%03d/f%04d.go", next/100, next)}
				tool := toolNames[next%len(toolNames)]
				next++
				if held[scopes[0]] {
					i--
					continue
				}
				fs = append(fs, &facts.Fact{Kind: facts.KindClaim, Tool: tool, Scopes: scopes, Access: facts.Exclusive,
					LeaseS: int64(facts.DefaultLease(scopes) / time.Second), Subject: "bench: open claim"})
			}
		default:
			return added, nil
		}
		written, err := l.Append(func(*facts.State, time.Time) ([]*facts.Fact, error) { return fs, nil })
		if err != nil {
			return added, err
		}
		added += len(written)
	}
}
