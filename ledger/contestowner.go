package ledger

import (
	"errors"
	"path"
	"strings"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// Who records a contest. Clones that merge at the same moment see the
// room in part: two of them, each holding a claim that is lower than a
// third, both find the third contested and both would record it, and one
// record is retracted later (ten clones wrote 9-22 risks for 9 contests).
// So one clone is chosen by the contested claim alone, which every clone
// agrees on and no later merge changes (a contested claim stays contested
// while it is open): the clone where the contested claim was made. It
// records the contest when it merges a claim that holds against its own,
// once; any other clone that merges the pair records nothing and receives
// the risk with that clone's next sync. A clone knows its claims as the
// open claims its ledger held that the remote's did not, when it synced
// (syncMemo.Mine).

// localClaims returns the open claims of st in the ledger at local that
// the ledger at theirs lacks: claims made here (or brought from another
// remote) that this remote has not seen. Fact ids are the blob names, so
// no blob is read.
func (l *Ledger) localClaims(st *facts.State, local, theirs refs.Hash) ([]string, error) {
	if local.IsZero() || local == theirs {
		return nil, nil
	}
	lc, err := l.Store.ReadCommit(local)
	if err != nil {
		return nil, err
	}
	var tt refs.Hash
	if !theirs.IsZero() {
		tc, err := l.Store.ReadCommit(theirs)
		if err != nil {
			return nil, err
		}
		tt = tc.Tree
	}
	added, err := l.diff(tt, lc.Tree)
	if err != nil && !errors.Is(err, errShrank) {
		return nil, err
	}
	var out []string
	for _, b := range added {
		id := strings.TrimSuffix(path.Base(b.path), ".json")
		if st.Claims.Get(id) != nil {
			out = append(out, id)
		}
	}
	return out, nil
}

// noteMine adds to the memo the open claims this clone holds that the
// ledger at theirs lacks, and forgets claims that are no longer open.
func (l *Ledger) noteMine(m *syncMemo, theirs refs.Hash) {
	// The local ledger as it is: no fetched ledger merged into it first
	// (the caller is about to merge theirs).
	prev := l.mergingTracking
	l.mergingTracking = true
	st, err := l.readMirror()
	l.mergingTracking = prev
	if err != nil {
		return
	}
	head, err := l.Head()
	if err != nil {
		return
	}
	ids, err := l.localClaims(st, head, theirs)
	if err != nil {
		l.warn("finding this clone's claims: %v", err)
	}
	seen := map[string]bool{}
	kept := m.Mine[:0]
	for _, id := range append(m.Mine, ids...) {
		if !seen[id] && st.Claims.Get(id) != nil {
			seen[id] = true
			kept = append(kept, id)
		}
	}
	m.Mine = kept
}

// mineTest is the memo's claims as a set.
func (m *syncMemo) mineTest() func(string) bool {
	set := make(map[string]bool, len(m.Mine))
	for _, id := range m.Mine {
		set[id] = true
	}
	return func(id string) bool { return set[id] }
}
