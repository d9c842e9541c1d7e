package facts

import (
	"fmt"
	"testing"
	"time"
)

// Tail gives what filtering All gives, after appends and after a merge
// brought facts in from another clone (the mirror stays in order).
func TestTailMatchesAll(t *testing.T) {
	now := t0
	_, cs := network(t, 2, &now)
	for i := 0; i < 40; i++ {
		c := cs[i%2]
		kind := []string{KindNote, KindRisk, KindDecision}[i%3]
		if _, err := c.ledger(t).Append(Simple(&Fact{Kind: kind, Tool: fmt.Sprintf("t%d", i%4), Subject: fmt.Sprintf("s%d", i)})); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Second)
		if i%7 == 0 {
			c.sync(t, true)
		}
	}
	cs[0].sync(t, true)
	cs[1].sync(t, true)
	defer func(c int) { tailChunk = c }(tailChunk)
	tailChunk = 97 // lines straddle chunks
	l := cs[1].ledger(t)
	all, err := l.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, keep := range []func(*Fact) bool{nil, func(f *Fact) bool { return f.Kind == KindRisk }, func(f *Fact) bool { return f.Tool == "t1" }} {
		var want []*Fact
		for _, f := range all {
			if keep == nil || keep(f) {
				want = append(want, f)
			}
		}
		for n := 1; n <= len(want)+2; n++ {
			got, err := cs[1].ledger(t).Tail(n, keep)
			if err != nil {
				t.Fatal(err)
			}
			w := want
			if len(w) > n {
				w = w[len(w)-n:]
			}
			if len(got) != len(w) {
				t.Fatalf("n=%d: %d facts, want %d", n, len(got), len(w))
			}
			for i := range w {
				if got[i].ID != w[i].ID {
					t.Fatalf("n=%d: fact %d is %s, want %s", n, i, got[i].ID, w[i].ID)
				}
			}
		}
	}
}
