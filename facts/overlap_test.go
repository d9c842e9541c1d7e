package facts

import (
	"testing"
	"time"
)

// One risk per pair of branches and set of files, in either order; a new
// set of files for the same pair is a new risk; owners and branches read
// back.
func TestOverlapRisks(t *testing.T) {
	st := NewState()
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	ab := BranchOverlap{A: "rally/b", B: "rally/a", OwnerA: "goose:02", OwnerB: "aider:01", Files: []string{"z.go", "a.go"}, Revision: "c0ffee"}
	fs, err := OverlapRisks([]BranchOverlap{ab, ab})(st, now)
	if err != nil || len(fs) != 1 {
		t.Fatalf("first: %d facts, %v; want 1", len(fs), err)
	}
	r := fs[0]
	a, b, ok := OverlapBranches(r)
	if !ok || a != "rally/a" || b != "rally/b" || r.Tool != SystemTool || r.Subject != "overlap-detected: rally/a (aider:01) and rally/b (goose:02) conflict on a.go, z.go" {
		t.Errorf("risk %+v", r)
	}
	if o := OverlapOwners(r); len(o) != 2 || o[0] != "aider:01" || o[1] != "goose:02" {
		t.Errorf("owners %v", o)
	}
	r.ID, r.Clock, r.At = "f_0000000000000001", 1, FormatTime(now)
	st.Apply([]*Fact{r})
	swapped := BranchOverlap{A: "rally/a", B: "rally/b", Files: []string{"a.go", "z.go"}}
	if fs, _ := OverlapRisks([]BranchOverlap{swapped})(st, now); len(fs) != 0 {
		t.Errorf("the same overlap, the other way round, was recorded again")
	}
	more := BranchOverlap{A: "rally/a", B: "rally/b", Files: []string{"a.go", "m.go", "z.go"}}
	if fs, _ := OverlapRisks([]BranchOverlap{more})(st, now); len(fs) != 1 {
		t.Errorf("a new set of files was not recorded")
	}
	if _, _, ok := OverlapBranches(&Fact{Kind: KindRisk, Subject: "something else", Scopes: []string{"branch:x", "branch:y"}}); ok {
		t.Errorf("another risk read as an overlap")
	}
}
