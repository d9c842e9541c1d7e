package ledger

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/git-rally/git-rally/facts"
)

// contestFigures counts, in one clone's ledger, the contested claims and
// every claim-contested risk ever written (retracted ones too).
func contestFigures(t *testing.T, c *clone) (contests, written, live int) {
	t.Helper()
	st := c.state(t)
	contests = len(st.Contests())
	all, err := c.ledger(t).All()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range all {
		if f.Kind == facts.KindRisk && strings.HasPrefix(f.Subject, facts.ContestedSubject) {
			written++
			if st.Risks[f.ID] != nil {
				live++
			}
		}
	}
	return
}

// Ten clones claim overlapping files while apart and then sync at once
// through one bare repository, several rounds: each contest gets one
// claim-contested risk, and no clone writes an extra one that it must
// retract later (issue 26, finding 9: 9-22 risks for 9 contests).
func TestSyncTenClonesOneRiskPerContest(t *testing.T) {
	if testing.Short() {
		t.Skip("ten clones syncing")
	}
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	_, cs := network(t, 10, &now)
	for i, c := range cs {
		for k := 0; k < i%3; k++ {
			c.note(t, "busy") // different clocks
		}
		c.claim(t, "t:"+c.name, fmt.Sprintf("file:f%d.go", i%3))
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(cs))
	for _, c := range cs {
		wg.Add(1)
		go func(c *clone) {
			defer wg.Done()
			for round := 0; round < 3; round++ {
				l, err := Open(c.common(), func() time.Time { return now })
				if err != nil {
					errs <- err
					return
				}
				_, err = l.Sync(SyncOptions{Remote: "origin", Dir: c.dir, Push: true, Backoff: func(int) time.Duration { return time.Millisecond }})
				l.Close()
				if err != nil {
					errs <- fmt.Errorf("%s: %w", c.name, err)
					return
				}
			}
		}(c)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	converge(t, cs)
	contests, written, live := contestFigures(t, cs[0])
	t.Logf("ten clones: %d contests, %d claim-contested risks written, %d live", contests, written, live)
	if contests != 7 {
		t.Fatalf("%d contests, want 7 (ten claims on three files)", contests)
	}
	if written != contests || live != contests {
		t.Fatalf("%d contests, %d risks written (%d live): want one each, none extra", contests, written, live)
	}
}
