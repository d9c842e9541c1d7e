package ledgergen_test

import (
	"testing"

	"github.com/git-rally/git-rally/bench/ledgergen"
)

func TestSetOpenClaims(t *testing.T) {
	l := newLedger(t)
	if _, err := ledgergen.Build(l, ledgergen.Options{Facts: 400, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{250, 3, 0, 7} {
		if _, err := ledgergen.SetOpenClaims(l, n, 100); err != nil {
			t.Fatal(err)
		}
		st, err := l.Read()
		if err != nil {
			t.Fatal(err)
		}
		if st.Claims.Len() != n {
			t.Fatalf("%d claims open, want %d", st.Claims.Len(), n)
		}
		for _, c := range st.SortedClaims() {
			if cs := st.Conflicts(c.Owner(), c.Scopes, c.Access); len(cs) > 0 {
				t.Fatalf("claim %s on %v overlaps %d others", c.ID, c.Scopes, len(cs))
			}
		}
	}
}
