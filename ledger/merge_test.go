package ledger

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// oneRepo is a repository whose ledger the test moves by hand to build
// histories that diverge; the cache is dropped after each move.
type oneRepo struct {
	*clone
	l *Ledger
}

func newOneRepo(t *testing.T) *oneRepo {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	_, cs := network(t, 1, &now)
	return &oneRepo{clone: cs[0], l: cs[0].ledger(t)}
}

func (r *oneRepo) head(t *testing.T) refs.Hash {
	h, err := r.l.Head()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func (r *oneRepo) reset(t *testing.T, h refs.Hash) {
	t.Helper()
	if err := r.l.Store.UpdateRef(LedgerRef, h); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(r.common(), "rally", "cache"))
	r.l = r.ledger(t)
}

func (r *oneRepo) append(t *testing.T, subjects ...string) refs.Hash {
	t.Helper()
	for _, s := range subjects {
		*r.now = r.now.Add(time.Second)
		if _, err := r.l.Append(facts.Simple(&facts.Fact{Kind: facts.KindNote, Tool: "t:x", Subject: s})); err != nil {
			t.Fatal(err)
		}
	}
	return r.head(t)
}

func (r *oneRepo) subjects(t *testing.T) []string {
	t.Helper()
	all, err := r.l.All()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range all {
		out = append(out, f.Subject)
	}
	sort.Strings(out)
	return out
}

func TestMergeCases(t *testing.T) {
	r := newOneRepo(t)
	base := r.append(t, "base")
	// Two sides that diverged from base.
	theirs := r.append(t, "theirs-1", "theirs-2")
	r.reset(t, base)
	ours := r.append(t, "ours-1")

	// Nothing from the zero commit, nothing from ourselves.
	for _, h := range []refs.Hash{refs.ZeroHash, ours, base} {
		mr, err := r.l.Merge(h, MergeOptions{})
		if err != nil || mr.Kind != MergeNone || mr.New != ours {
			t.Fatalf("merge %s: %+v, %v; want none", h, mr, err)
		}
	}
	// Diverged: a merge commit, ours first, holding the union.
	mr, err := r.l.Merge(theirs, MergeOptions{From: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if mr.Kind != MergeCommit || mr.NewFacts != 2 || mr.OnlyOurs != 1 {
		t.Fatalf("diverged merge: %+v", mr)
	}
	c, err := r.l.Store.ReadCommit(mr.New)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Parents) != 2 || c.Parents[0] != ours || c.Parents[1] != theirs {
		t.Fatalf("merge parents %v, want [ours theirs]", c.Parents)
	}
	if got := fmt.Sprint(r.subjects(t)); got != "[base ours-1 theirs-1 theirs-2]" {
		t.Fatalf("merged facts %s", got)
	}
	// The clock witnesses both sides.
	st, _ := r.l.Read()
	merged := r.head(t)
	next := r.append(t, "after")
	_ = next
	all, _ := r.l.All()
	if last := all[len(all)-1]; last.Subject != "after" || last.Clock != st.MaxClock+1 {
		t.Fatalf("append after merge: clock %d, want %d", last.Clock, st.MaxClock+1)
	}

	// Fast-forward: a side that holds every local fact is adopted as is.
	r.reset(t, base)
	mr, err = r.l.Merge(merged, MergeOptions{})
	if err != nil || mr.Kind != MergeFastForward || r.head(t) != merged || mr.NewFacts != 3 {
		t.Fatalf("fast-forward: %+v, %v", mr, err)
	}
	// No local ledger at all: fast-forward too.
	if err := os.Remove(filepath.Join(r.common(), filepath.FromSlash(LedgerRef))); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(r.common(), "rally", "cache"))
	r.l = r.ledger(t)
	mr, err = r.l.Merge(merged, MergeOptions{})
	if err != nil || mr.Kind != MergeFastForward || r.head(t) != merged || mr.NewFacts != 4 {
		t.Fatalf("fast-forward onto nothing: %+v, %v", mr, err)
	}
}

func TestMergeEnsureAncestor(t *testing.T) {
	r := newOneRepo(t)
	base := r.append(t, "a")
	ours := r.append(t, "b")
	// A rebuilt history: base's facts in a commit that is not ours'
	// ancestor.
	bc, _ := r.l.Store.ReadCommit(base)
	rebuilt, err := r.l.Store.WriteCommit(refs.Commit{Tree: bc.Tree, Message: "rebuilt\n", When: *r.now})
	if err != nil {
		t.Fatal(err)
	}
	mr, err := r.l.Merge(rebuilt, MergeOptions{})
	if err != nil || mr.Kind != MergeNone || r.head(t) != ours {
		t.Fatalf("subset merge: %+v, %v; want none", mr, err)
	}
	mr, err = r.l.Merge(rebuilt, MergeOptions{EnsureAncestor: true})
	if err != nil || mr.Kind != MergeCommit {
		t.Fatalf("ensure-ancestor merge: %+v, %v", mr, err)
	}
	c, _ := r.l.Store.ReadCommit(mr.New)
	oc, _ := r.l.Store.ReadCommit(ours)
	if c.Tree != oc.Tree || len(c.Parents) != 2 || c.Parents[1] != rebuilt {
		t.Fatalf("ensure-ancestor commit: tree %s parents %v", c.Tree, c.Parents)
	}
	// Equal trees under different commits: adopt theirs.
	r.reset(t, ours)
	same, _ := r.l.Store.WriteCommit(refs.Commit{Tree: oc.Tree, Message: "same facts\n", When: *r.now})
	mr, err = r.l.Merge(same, MergeOptions{})
	if err != nil || mr.Kind != MergeFastForward || r.head(t) != same || mr.NewFacts != 0 {
		t.Fatalf("equal trees: %+v, %v", mr, err)
	}
}

func TestMergeRefusesForeignTree(t *testing.T) {
	r := newOneRepo(t)
	r.append(t, "a")
	blob, _ := r.l.Store.WriteBlob([]byte("hello\n"))
	for name, es := range map[string][]refs.Entry{
		"no format":    {{Name: "README", Hash: blob}},
		"other format": {{Name: FormatFile, Hash: blob}},
	} {
		tree, _ := r.l.Store.WriteTree(es)
		c, _ := r.l.Store.WriteCommit(refs.Commit{Tree: tree, Message: "x\n", When: *r.now})
		if _, err := r.l.Merge(c, MergeOptions{}); err == nil {
			t.Errorf("%s: merged a tree that is not a ledger", name)
		}
	}
}

func TestMissing(t *testing.T) {
	r := newOneRepo(t)
	base := r.append(t, "a", "b")
	more := r.append(t, "c")
	for _, tc := range []struct {
		old, cur refs.Hash
		want     int
	}{{more, base, 1}, {base, more, 0}, {more, refs.ZeroHash, 3}, {more, more, 0}, {refs.ZeroHash, more, 0}} {
		n, err := r.l.Missing(tc.old, tc.cur)
		if err != nil || n != tc.want {
			t.Errorf("Missing(%.7s, %.7s) = %d, %v; want %d", tc.old, tc.cur, n, err, tc.want)
		}
	}
}

// The union is the same whichever side is ours: every clone that merges
// the same facts builds the same tree, even with segments past segMax.
func TestUnionCommutes(t *testing.T) {
	r := newOneRepo(t)
	rng := rand.New(rand.NewSource(7))
	base := r.append(t, "base")
	var heads []refs.Hash
	for side := 0; side < 3; side++ {
		r.reset(t, base)
		*r.now = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
		n := 100 + rng.Intn(250)
		_, err := r.l.Append(func(st *facts.State, now time.Time) ([]*facts.Fact, error) {
			var fs []*facts.Fact
			for i := 0; i < n; i++ {
				fs = append(fs, &facts.Fact{Kind: facts.KindNote, Tool: "t:x", Subject: fmt.Sprintf("side %d fact %d", side, i)})
			}
			return fs, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		heads = append(heads, r.head(t))
	}
	tree := func(a, b refs.Hash) refs.Hash {
		var us unionStats
		ac, _ := r.l.Store.ReadCommit(a)
		bc, _ := r.l.Store.ReadCommit(b)
		u, err := r.l.union("", ac.Tree, bc.Tree, true, &us)
		if err != nil {
			t.Fatal(err)
		}
		return u.hash
	}
	for i := range heads {
		for j := range heads {
			if tree(heads[i], heads[j]) != tree(heads[j], heads[i]) {
				t.Fatalf("union of %d and %d depends on the order", i, j)
			}
		}
	}
}

// A merge reads only what differs: the shared part of the two ledgers is
// deleted from the object store before the merge, and the merge still
// succeeds.
func TestMergeCostFollowsDivergence(t *testing.T) {
	r := newOneRepo(t)
	*r.now = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for i := 0; i < 4; i++ {
		_, err := r.l.Append(func(st *facts.State, now time.Time) ([]*facts.Fact, error) {
			var fs []*facts.Fact
			for j := 0; j < 200; j++ {
				fs = append(fs, &facts.Fact{Kind: facts.KindNote, Tool: "t:x", Subject: fmt.Sprintf("old %d.%d", i, j)})
			}
			return fs, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	base := r.head(t)
	*r.now = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	theirs := r.append(t, "theirs")
	r.reset(t, base)
	*r.now = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	r.append(t, "ours")

	// Delete every object under facts/2026-03/01 (800 facts): shared by
	// both sides, so the union must not open it.
	bc, _ := r.l.Store.ReadCommit(base)
	day := lookupPath(t, r.l.Store, bc.Tree, "facts", "2026-03", "01")
	removed := removeObjects(t, r.l.Store, day)
	if removed < 800 {
		t.Fatalf("removed %d objects", removed)
	}
	r.l = r.ledger(t)
	mr, err := r.l.Merge(theirs, MergeOptions{})
	if err != nil {
		t.Fatalf("merge needed the shared part: %v", err)
	}
	if mr.Kind != MergeCommit || mr.NewFacts != 1 || mr.OnlyOurs != 1 {
		t.Fatalf("merge: %+v", mr)
	}
}

func lookupPath(t *testing.T, st *refs.Store, tree refs.Hash, names ...string) refs.Hash {
	t.Helper()
	for _, n := range names {
		es, err := st.ReadTree(tree)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, e := range es {
			if e.Name == n {
				tree, found = e.Hash, true
			}
		}
		if !found {
			t.Fatalf("no %s", n)
		}
	}
	return tree
}

func removeObjects(t *testing.T, st *refs.Store, tree refs.Hash) int {
	t.Helper()
	es, err := st.ReadTree(tree)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range es {
		if e.Dir {
			n += removeObjects(t, st, e.Hash)
		} else if removeObject(st, e.Hash) {
			n++
		}
	}
	if removeObject(st, tree) {
		n++
	}
	return n
}

func removeObject(st *refs.Store, h refs.Hash) bool {
	s := h.String()
	return os.Remove(filepath.Join(st.CommonDir, "objects", s[:2], s[2:])) == nil
}

// A file that is not a fact and differs on the two sides (only a hand edit
// can do that) keeps the local version, with a warning; facts still merge.
func TestMergeForeignFileConflictKeepsOurs(t *testing.T) {
	r := newOneRepo(t)
	base := r.append(t, "a")
	withFile := func(h refs.Hash, content string) refs.Hash {
		c, _ := r.l.Store.ReadCommit(h)
		es, _ := r.l.Store.ReadTree(c.Tree)
		blob, _ := r.l.Store.WriteBlob([]byte(content))
		tree, _ := r.l.Store.WriteTree(append(es, refs.Entry{Name: "NOTES", Hash: blob}))
		n, _ := r.l.Store.WriteCommit(refs.Commit{Tree: tree, Parents: []refs.Hash{h}, Message: "notes\n", When: *r.now})
		return n
	}
	theirs := withFile(r.append(t, "b"), "theirs\n")
	r.reset(t, withFile(base, "ours\n"))
	mr, err := r.l.Merge(theirs, MergeOptions{})
	if err != nil || mr.Kind != MergeCommit || mr.Conflicts != 1 || mr.NewFacts != 1 {
		t.Fatalf("merge: %+v, %v", mr, err)
	}
	c, _ := r.l.Store.ReadCommit(mr.New)
	es, _ := r.l.Store.ReadTree(c.Tree)
	for _, e := range es {
		if e.Name == "NOTES" {
			b, _ := r.l.Store.ReadBlob(e.Hash)
			if string(b) != "ours\n" {
				t.Fatalf("NOTES is %q", b)
			}
		}
	}
	if len(r.l.Warnings) == 0 {
		t.Fatal("no warning about the conflict")
	}
}
