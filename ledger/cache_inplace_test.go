package ledger

import (
	"sync"
	"testing"
	"time"

	"github.com/git-rally/git-rally/facts"
)

// state.bin is rewritten in place; a reader that reads it half written
// must never believe it. Readers load it while appends rewrite it; every
// state a reader took is the state at the head it names (its clock is that
// head's), and every Read succeeds.
func TestStateRewrittenInPlaceNeverReadTorn(t *testing.T) {
	now := t0
	_, cs := network(t, 1, &now)
	c := cs[0]
	clock := func() time.Time { return now }
	const appends = 120
	var mu sync.Mutex
	clockAt := map[string]int64{}
	type seen struct {
		head string
		max  int64
	}
	var got []seen
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			if st := newCache(c.common()).load(); st != nil {
				got = append(got, seen{st.Head, st.MaxClock})
			}
			l, err := Open(c.common(), clock)
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := l.Read(); err != nil {
				t.Errorf("read beside appends: %v", err)
			}
			l.Close()
		}
	}()
	for i := 0; i < appends; i++ {
		l, err := Open(c.common(), clock)
		if err != nil {
			t.Fatal(err)
		}
		fs, err := l.Append(facts.Simple(&facts.Fact{Kind: facts.KindNote, Tool: "w:1", Subject: "n"}))
		l.Close()
		if err != nil {
			t.Fatal(err)
		}
		h, _ := l.Head()
		mu.Lock()
		clockAt[h.String()] = fs[0].Clock
		mu.Unlock()
	}
	close(done)
	wg.Wait()
	if len(got) == 0 {
		t.Fatal("the reader never loaded state.bin")
	}
	for _, s := range got {
		if want, ok := clockAt[s.head]; ok && s.max != want {
			t.Fatalf("a reader believed a state.bin at %s with clock %d, want %d", s.head, s.max, want)
		}
	}
	t.Logf("%d loads beside %d appends", len(got), appends)
}
