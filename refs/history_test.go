package refs

import (
	"fmt"
	"reflect"
	"runtime"
	"testing"
	"time"
)

// A signed commit read from git's raw bytes (the batch path) equals the
// one go-git decodes, payload included; AddedFiles says what each commit
// of a history with a merge brought in itself.
func TestSignedCommitsAndAddedFiles(t *testing.T) {
	gd := gitRepo(t)
	st, err := Open(gd)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	st.Signer = fixedSigner{}

	when := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	tree := func(names ...string) Hash {
		var es []Entry
		for _, n := range names {
			b, _ := st.WriteBlob([]byte(n))
			es = append(es, Entry{Name: n, Hash: b})
		}
		sub, _ := st.WriteTree(es)
		h, _ := st.WriteTree([]Entry{{Name: "d", Dir: true, Hash: sub}})
		return h
	}
	commit := func(t0 Hash, parents ...Hash) Hash {
		h, err := st.WriteCommit(Commit{Tree: t0, Parents: parents, Message: "m\n", When: when})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	root := commit(tree("a"))
	left := commit(tree("a", "b"), root)
	st.Signer = nil
	right := commit(tree("a", "c"), root)
	merge := commit(tree("a", "b", "c", "evil"), left, right)
	hs := []Hash{root, left, right, merge}

	for _, h := range hs {
		want, err := st.ReadSignedCommit(h)
		if err != nil {
			t.Fatal(err)
		}
		raw := gitOut(t, gd, "cat-file", "commit", h.String()) + "\n"
		got, err := parseSignedCommit([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		if want.When.Unix() != got.When.Unix() {
			t.Errorf("%s: time %v, want %v", h, got.When, want.When)
		}
		got.When, want.When = time.Time{}, time.Time{}
		if !reflect.DeepEqual(got.Commit, want.Commit) || got.Signature != want.Signature || string(got.Payload) != string(want.Payload) {
			t.Errorf("%s: parsed\n%+v\n%q\n%q\nwant\n%+v\n%q\n%q", h, got.Commit, got.Signature, got.Payload, want.Commit, want.Signature, want.Payload)
		}
	}
	added, err := st.AddedFiles(hs)
	if err != nil {
		t.Fatal(err)
	}
	for h, want := range map[Hash][]string{root: {"d/a"}, left: {"d/b"}, right: {"d/c"}, merge: {"d/evil"}} {
		if !reflect.DeepEqual(added[h], want) {
			t.Errorf("added by %s: %v, want %v", h, added[h], want)
		}
	}
	// Streamed, holding only a merge's diffs, it says the same.
	each := map[Hash][]string{}
	if err := st.EachAddedFile(hs, func(h Hash) bool { return h == merge }, func(h Hash, p []byte) {
		each[h] = append(each[h], string(p))
	}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(each, added) {
		t.Errorf("EachAddedFile: %v, AddedFiles %v", each, added)
	}
	list, err := st.RevList(merge, left)
	if err != nil || len(list) != 2 || list[0] != right || list[1] != merge {
		t.Errorf("RevList = %v, %v", list, err)
	}
}

// fixedSigner "signs" with a constant armored block: what is read back is
// compared, not verified (package sshsig tests real signatures).
type fixedSigner struct{}

func (fixedSigner) Ready() error { return nil }
func (fixedSigner) Sign([]byte) ([]byte, error) {
	return []byte("-----BEGIN SSH SIGNATURE-----\nU1NIU0lHAAAAAQ==\n-----END SSH SIGNATURE-----\n"), nil
}

// EachAddedFile holds nothing of diff-tree's answer: what it allocates a
// file a commit adds is a small part of what listing them (AddedFiles:
// the answer as one string, split, a set per commit) allocates. A first
// verification of a million facts listed them at 0.5 GB.
func TestEachAddedFileHoldsNoPath(t *testing.T) {
	gd := gitRepo(t)
	st, err := Open(gd)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	when := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	b, _ := st.WriteBlob([]byte("x"))
	const n = 3000
	var es []Entry
	for i := 0; i < n; i++ {
		es = append(es, Entry{Name: fmt.Sprintf("f_%016x.json", i), Hash: b})
	}
	sub, _ := st.WriteTree(es)
	big, _ := st.WriteTree([]Entry{{Name: "d", Dir: true, Hash: sub}})
	small, _ := st.WriteTree(nil)
	root, _ := st.WriteCommit(Commit{Tree: small, Message: "m\n", When: when})
	c, err := st.WriteCommit(Commit{Tree: big, Parents: []Hash{root}, Message: "m\n", When: when})
	if err != nil {
		t.Fatal(err)
	}
	alloc := func(fn func()) float64 {
		var a, b runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&a)
		fn()
		runtime.ReadMemStats(&b)
		return float64(b.TotalAlloc-a.TotalAlloc) / n
	}
	k := 0
	was := alloc(func() { st.AddedFiles([]Hash{c}) })
	is := alloc(func() {
		if err := st.EachAddedFile([]Hash{c}, func(Hash) bool { return false }, func(Hash, []byte) { k++ }); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("a file added: %.0f bytes listed, %.0f streamed", was, is)
	if k != n {
		t.Fatalf("EachAddedFile handed on %d files, want %d", k, n)
	}
	if is > was/4 {
		t.Fatalf("EachAddedFile allocates %.0f bytes a file, listing them %.0f", is, was)
	}
}
