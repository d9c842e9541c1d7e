package ledger

import (
	"bytes"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// encodeCacheFileGrown is encodeCacheFile as it was before it sized its
// buffer: the trees section in a buffer of its own, copied in as a string,
// the payload copied behind its header.
func encodeCacheFileGrown(cf *cacheFile, trees map[refs.Hash][]refs.Entry) []byte {
	var e encoder
	encodeState(&e, cf.State, cf)
	var t encoder
	hs := make([]string, 0, len(trees))
	for h := range trees {
		hs = append(hs, h.String())
	}
	sort.Strings(hs)
	t.uint(uint64(len(hs)))
	for _, h := range hs {
		t.str(h)
		hh, _ := refs.ParseHash(h)
		es := trees[hh]
		t.uint(uint64(len(es)))
		for _, en := range es {
			t.str(encodeEntry(en))
		}
	}
	e.str(string(t.b))
	return seal(e.b, "state", cf.State.Head)
}

func encodeEntry(e refs.Entry) string {
	t := "b"
	if e.Dir {
		t = "d"
	}
	return t + e.Hash.String() + e.Name
}

// The sized encoder writes the bytes the grown one wrote: no cache of the
// previous build is rebuilt, and a reader of either reads the other's.
func TestEncodeCacheFileSameBytes(t *testing.T) {
	now := t0
	_, cs := network(t, 1, &now)
	c := cs[0]
	l := c.ledger(t)
	for i := 0; i < 4; i++ {
		if _, err := l.Append(func(*facts.State, time.Time) ([]*facts.Fact, error) {
			fs := []*facts.Fact{{Kind: facts.KindClaim, Tool: "a:1", Scopes: []string{fmt.Sprintf("file:f%d.go", i)}}}
			for j := 0; j < 90; j++ {
				fs = append(fs, &facts.Fact{Kind: facts.KindNote, Tool: "a:1", Subject: fmt.Sprintf("n %d %d", i, j)})
			}
			return fs, nil
		}); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Minute)
	}
	st, err := l.Read()
	if err != nil {
		t.Fatal(err)
	}
	trees := map[refs.Hash][]refs.Entry{}
	for _, h := range l.cache.headPath(st.Tree) {
		trees[h] = l.cache.trees[h]
	}
	if len(trees) < 5 {
		t.Fatalf("%d trees on the head path, want 5", len(trees))
	}
	for _, tr := range []map[refs.Hash][]refs.Entry{trees, nil} {
		cf := &cacheFile{State: st, Gen: 3, MirrorLen: 12345, MirrorSum: 99}
		got, want := encodeCacheFile(cf, tr), encodeCacheFileGrown(cf, tr)
		if !bytes.Equal(got, want) {
			t.Fatalf("encodeCacheFile: %d bytes, differs from the grown encoding's %d", len(got), len(want))
		}
		if dec, _, ok := decodeCacheFile(got); !ok || dec.State.Head != st.Head {
			t.Fatal("state.bin does not decode")
		}
	}
}
