package ledger

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// A claim appended by a fresh process leaves the cached handoffs encoded
// (it never looks at them), and the next process still finds every one of
// them, with a later answer applied.
func TestAppendLeavesCachedHandoffsEncoded(t *testing.T) {
	now := t0
	_, cs := network(t, 1, &now)
	c := cs[0]
	var hs []*facts.Fact
	for i := 0; i < 5; i++ {
		fs, err := c.ledger(t).Append(facts.Simple(&facts.Fact{Kind: facts.KindHandoff, Tool: "a", Target: "b", Subject: fmt.Sprintf("h%d", i)}))
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, fs[0])
		now = now.Add(time.Second)
	}

	before := handoffFiles(t, c)
	if len(before) != 2 {
		t.Fatalf("handoffs files after five handoffs: %v, want the newest two", before)
	}
	l := c.ledger(t)
	if _, err := l.Append(facts.Claim(facts.ClaimRequest{Owner: facts.Owner{Tool: "a"}, Scopes: []string{"file:x.go"}})); err != nil {
		t.Fatal(err)
	}
	if l.last == nil || l.last.Pending() == nil || len(l.last.Pending().Enc) == 0 {
		t.Fatalf("the claim decoded the cached handoffs (last %v)", l.last != nil)
	}

	if got := handoffFiles(t, c); !reflect.DeepEqual(got, before) {
		t.Errorf("the claim changed the handoffs files: %v -> %v", before, got)
	}

	now = now.Add(time.Second)
	if _, err := c.ledger(t).Append(facts.Answer(&facts.Fact{Kind: facts.KindResolve, Tool: "b", Ref: hs[2].ID}, hs[2])); err != nil {
		t.Fatal(err)
	}
	st := c.state(t)
	got := st.Handoffs()
	if len(got) != 4 || got[hs[2].ID] != nil {
		t.Fatalf("after the resolve: %d handoffs (resolved one present: %v), want 4", len(got), got[hs[2].ID] != nil)
	}
	for i, h := range hs {
		if i != 2 && (got[h.ID] == nil || got[h.ID].Fact.Subject != h.Subject) {
			t.Errorf("handoff %s (%s) lost", h.ID, h.Subject)
		}
	}
	if st.Claims.Len() != 1 {
		t.Errorf("%d claims, want 1", st.Claims.Len())
	}
	// Each handoff and the resolve wrote a new file; only the newest two
	// are kept (a reader may hold the previous state.bin).
	if after := handoffFiles(t, c); len(after) != 2 || reflect.DeepEqual(after, before) {
		t.Errorf("handoffs files after the resolve: %v (before %v), want the newest two", after, before)
	}
}

func handoffFiles(t *testing.T, c *clone) []string {
	t.Helper()
	ms, err := filepath.Glob(filepath.Join(c.common(), "rally", "cache", "handoffs-*.bin"))
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// An append goes into the day's newest segment until it holds segMax facts.
func TestSegmentRollsOver(t *testing.T) {
	now := t0
	_, cs := network(t, 1, &now)
	c := cs[0]
	l := c.ledger(t)
	for i := 0; i < segMax+6; i++ {
		if _, err := l.Append(facts.Simple(&facts.Fact{Kind: facts.KindNote, Tool: "a", Subject: fmt.Sprintf("n%d", i)})); err != nil {
			t.Fatal(err)
		}
	}
	day := "refs/rally/ledger:" + strings.Join(LayoutDirs(now), "/")
	got := git(t, c.dir, "ls-tree", "--name-only", day)
	if got != "0000.jsonl\n0000\n0001" && got != "0000.jsonl\n0000\n0001\n" {
		t.Fatalf("segments of the day: %q, want 0000, its segment blob 0000.jsonl and 0001", got)
	}
	// The full segment's blob is its blobs' lines in their names' order.
	var want strings.Builder
	for _, name := range strings.Fields(git(t, c.dir, "ls-tree", "--name-only", day+"/0000")) {
		want.WriteString(git(t, c.dir, "cat-file", "blob", day+"/0000/"+name))
	}
	if sb := git(t, c.dir, "cat-file", "blob", day+"/0000.jsonl"); sb != want.String() {
		t.Errorf("segment blob 0000.jsonl is not its segment's lines in order")
	}
	for seg, want := range map[string]int{"0000": segMax, "0001": 6} {
		out := git(t, c.dir, "ls-tree", "--name-only", day+"/"+seg)
		if n := len(strings.Fields(out)); n != want {
			t.Errorf("segment %s holds %d facts, want %d", seg, n, want)
		}
	}
}

// state.bin keeps the trees of the head's newest path and no others, after
// appends and after a rebuild from scratch.
func TestCacheKeepsTheHeadPath(t *testing.T) {
	now := t0
	_, cs := network(t, 1, &now)
	c := cs[0]
	for i := 0; i < 30; i++ {
		if _, err := c.ledger(t).Append(facts.Simple(&facts.Fact{Kind: facts.KindNote, Tool: "a", Subject: fmt.Sprintf("n%d", i)})); err != nil {
			t.Fatal(err)
		}
		now = now.Add(7 * time.Hour) // several days and months
	}
	check := func(when string) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(c.common(), "rally", "cache", stateFile))
		if err != nil {
			t.Fatal(err)
		}
		_, raw, ok := decodeCacheFile(b)
		if !ok {
			t.Fatal("state.bin does not decode")
		}
		kept := &cache{trees: map[refs.Hash][]refs.Entry{}, rawTrees: raw}
		kept.decodeTrees()
		last := LayoutDirs(now.Add(-7 * time.Hour)) // the last append's path
		var want []string
		for _, spec := range []string{"", ":facts", ":facts/" + last[1], ":facts/" + last[1] + "/" + last[2], ":facts/" + last[1] + "/" + last[2] + "/0000"} {
			want = append(want, git(t, c.dir, "rev-parse", "refs/rally/ledger^{tree}"+spec))
		}
		for _, h := range want {
			if hh, err := refs.ParseHash(strings.TrimSpace(h)); err != nil || kept.trees[hh] == nil {
				t.Errorf("%s: head path tree %s not kept", when, h)
			}
		}
		if len(kept.trees) != 5 {
			t.Errorf("%s: %d trees kept, want the 5 of the head path", when, len(kept.trees))
		}
	}
	check("after appends")
	if err := os.Remove(filepath.Join(c.common(), "rally", "cache", stateFile)); err != nil {
		t.Fatal(err)
	}
	if st := c.state(t); st.Facts != 30 {
		t.Errorf("rebuilt projection holds %d facts, want 30", st.Facts)
	}
	check("after a rebuild")
}

// A rebuild after state.bin was deleted starts a mirror generation after
// the newest on disk, so older mirrors are still cleaned up.
func TestMirrorGenerationsAfterStateLoss(t *testing.T) {
	dir := t.TempDir()
	c := newCache(dir)
	if err := os.MkdirAll(c.dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.mirrorPath(5), []byte("old\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	newCache(dir).save(facts.NewState(), nil, true) // no state.bin: gen 6
	if err := os.Remove(filepath.Join(c.dir, stateFile)); err != nil {
		t.Fatal(err)
	}
	newCache(dir).save(facts.NewState(), nil, true) // gen 7, keeps 6
	got, err := filepath.Glob(filepath.Join(c.dir, "facts-*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{c.mirrorPath(6), c.mirrorPath(7)}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("mirrors %v, want %v", got, want)
	}
}
