package ledger

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// The trees a Ledger keeps in memory are the trees in git: an append that
// adds a fact to a segment must not rewrite, in place, the entries it
// read for the segment's previous tree. (It did: the new entry went into
// the spare capacity of the remembered slice and the sort moved it into
// the old tree's entries, so a later diff from that tree missed the new
// fact and found an old one again.)
func TestTreeCacheMatchesGit(t *testing.T) {
	now := t0
	_, cs := network(t, 1, &now)
	l := cs[0].ledger(t)
	for i := 0; i < 40; i++ {
		scope := fmt.Sprintf("file:tc/%d.go", i)
		if _, err := l.Append(facts.Claim(facts.ClaimRequest{Owner: facts.Owner{Tool: "w"}, Scopes: []string{scope}})); err != nil {
			t.Fatal(err)
		}
		if l.cache.rawTrees != nil {
			l.cache.decodeTrees()
		}
		for h, es := range l.cache.trees {
			want, err := l.Store.ReadTree(h)
			if err != nil {
				t.Fatal(err)
			}
			got := append([]refs.Entry(nil), es...)
			sort.Slice(got, func(a, b int) bool { return got[a].Name < got[b].Name })
			sort.Slice(want, func(a, b int) bool { return want[a].Name < want[b].Name })
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("after append %d the remembered tree %s lists\n%v\ngit has\n%v", i, h, got, want)
			}
		}
	}
}

// The mirror a state file names holds that state's facts, every one, even
// when a save in between did not happen: a Ledger whose last save failed
// must not add its next facts to the mirror of the state it last saw (it
// did: the mirror lost the facts of the append whose save failed, and a
// rebuild from it lost them too).
func TestMirrorHoldsTheSavedStateAfterAFailedSave(t *testing.T) {
	now := t0
	_, cs := network(t, 1, &now)
	c := cs[0]
	l := c.ledger(t)
	claim := func(p string) {
		t.Helper()
		if _, err := l.Append(facts.Claim(facts.ClaimRequest{Owner: facts.Owner{Tool: "w"}, Scopes: []string{p}})); err != nil {
			t.Fatal(err)
		}
	}
	claim("file:m/a.go")
	sf := filepath.Join(c.common(), "rally", "cache", stateFile)
	if err := os.Rename(sf, sf+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(sf, 0o777); err != nil { // the next state file cannot be written
		t.Fatal(err)
	}
	claim("file:m/b.go")
	if err := os.Remove(sf); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(sf+".away", sf); err != nil {
		t.Fatal(err)
	}
	claim("file:m/c.go")

	fresh := newCache(c.common())
	st := fresh.load()
	if st == nil {
		t.Fatal("no state file")
	}
	data, ok := fresh.mirrorBytes(st)
	if !ok {
		t.Fatal("the state file's mirror does not match its checksum")
	}
	if n := bytes.Count(data, []byte("\n")); n != st.Facts {
		t.Errorf("the mirror of a state of %d facts holds %d lines", st.Facts, n)
	}
}
