package ledgergen_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/git-rally/git-rally/bench/ledgergen"
	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/ledger"
	"github.com/git-rally/git-rally/refs"
)

// newLedger opens the ledger of a fresh repository.
func newLedger(t *testing.T) *ledger.Ledger {
	t.Helper()
	dir := t.TempDir()
	if _, err := refs.Git(dir, nil, "init", "-q", "."); err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Open(filepath.Join(dir, ".git"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func TestBuild(t *testing.T) {
	l := newLedger(t)
	end := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	st, err := ledgergen.Build(l, ledgergen.Options{Facts: 600, Seed: 3, End: end, MaxBatch: 300})
	if err != nil {
		t.Fatal(err)
	}
	if st.Facts != 600 {
		t.Errorf("built %d facts, want 600", st.Facts)
	}
	if st.MaxBatch > 200 {
		t.Errorf("a commit carries %d facts; the cap is 200", st.MaxBatch)
	}
	if !st.End.Equal(end) || st.End.Sub(st.Start) < 2*time.Hour {
		t.Errorf("facts span %s to %s; want several hours ending at %s", st.Start, st.End, end)
	}
	for _, k := range []string{facts.KindPresence, facts.KindClaim, facts.KindRelease, facts.KindNote,
		facts.KindHandoff, facts.KindReceipt, facts.KindResolve} {
		if st.ByKind[k] == 0 {
			t.Errorf("no %s facts in %v", k, st.ByKind)
		}
	}
	// The ledger reads back whole, and the clock passed in was restored.
	all, err := l.All()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 600 {
		t.Errorf("ledger holds %d facts, want 600", len(all))
	}
	if got := l.Now(); got.Equal(end) {
		t.Errorf("Build left its fixed clock on the ledger")
	}
}
