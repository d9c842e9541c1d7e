package refs

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

func memContent(t *testing.T, o *plumbing.MemoryObject) []byte {
	t.Helper()
	r, _ := o.Reader()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The tree codec writes the bytes go-git's plumbing/object wrote before it,
// in git's order, and reads them back.
func TestTreeCodecMatchesGoGit(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	names := []string{"a", "a.b", "a-b", "a0", "b", "facts", "format", "0001", "2026-12", "x.json", "a.", "ab"}
	for round := 0; round < 200; round++ {
		seen := map[string]bool{}
		var entries []Entry
		for _, n := range names {
			if rng.IntN(2) == 0 || seen[n] {
				continue
			}
			seen[n] = true
			var h Hash
			for i := range h {
				h[i] = byte(rng.IntN(256))
			}
			entries = append(entries, Entry{Name: n, Dir: rng.IntN(2) == 0, Hash: h})
		}
		var gt object.Tree
		for _, e := range entries {
			mode := filemode.Regular
			if e.Dir {
				mode = filemode.Dir
			}
			gt.Entries = append(gt.Entries, object.TreeEntry{Name: e.Name, Mode: mode, Hash: plumbing.Hash(e.Hash)})
		}
		// go-git's sorter, the one the store used before this codec.
		sortGoGit(gt.Entries)
		var obj plumbing.MemoryObject
		if err := gt.Encode(&obj); err != nil {
			t.Fatal(err)
		}
		want := memContent(t, &obj)
		sorted := append([]Entry(nil), entries...)
		sortEntries(sorted)
		got := encodeTree(sorted)
		if !bytes.Equal(got, want) {
			t.Fatalf("round %d: tree bytes differ from go-git's\n got %q\nwant %q", round, got, want)
		}
		back, err := decodeTree(got)
		if err != nil {
			t.Fatal(err)
		}
		if len(back) != len(sorted) {
			t.Fatalf("decoded %d entries of %d", len(back), len(sorted))
		}
		for i := range back {
			if back[i] != sorted[i] {
				t.Fatalf("entry %d: %+v != %+v", i, back[i], sorted[i])
			}
		}
	}
	if _, err := decodeTree([]byte("100644 x\x00short")); err == nil {
		t.Fatal("a truncated tree decoded")
	}
}

func sortGoGit(e []object.TreeEntry) {
	s := object.TreeEntrySorter(e)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s.Less(j, j-1); j-- {
			s.Swap(j, j-1)
		}
	}
}

// The commit codec writes what go-git wrote for the same commit, signed
// and unsigned, in any time zone, and decodes what git itself writes.
func TestCommitCodecMatchesGoGit(t *testing.T) {
	tree := Hash{1, 2, 3}
	p1, p2 := Hash{4}, Hash{5, 6}
	zones := []*time.Location{time.UTC, time.FixedZone("", 5*3600+30*60), time.FixedZone("", -7*3600)}
	sigs := []string{"", "-----BEGIN SSH SIGNATURE-----\nU1NIU0lH\nAAAA\n-----END SSH SIGNATURE-----\n"}
	for _, z := range zones {
		for _, sig := range sigs {
			when := time.Date(2026, 12, 1, 11, 30, 0, 0, z)
			c := Commit{Tree: tree, Parents: []Hash{p1, p2}, Message: "rally: 2 facts\n\nbody\n", When: when}
			who := object.Signature{Name: Signature.Name, Email: Signature.Email, When: when}
			gc := object.Commit{Author: who, Committer: who, Message: c.Message, TreeHash: plumbing.Hash(tree),
				ParentHashes: []plumbing.Hash{plumbing.Hash(p1), plumbing.Hash(p2)}, PGPSignature: sig}
			var obj plumbing.MemoryObject
			if err := gc.Encode(&obj); err != nil {
				t.Fatal(err)
			}
			want := memContent(t, &obj)
			got := encodeCommit(c, sig)
			if !bytes.Equal(got, want) {
				t.Fatalf("commit bytes differ from go-git's\n got %q\nwant %q", got, want)
			}
			back, gotSig, payload, err := decodeCommit(got)
			if err != nil {
				t.Fatal(err)
			}
			if back.Tree != tree || len(back.Parents) != 2 || back.Parents[1] != p2 || back.Message != c.Message || !back.When.Equal(when) {
				t.Fatalf("decoded %+v", back)
			}
			if _, off := back.When.Zone(); off != func() int { _, o := when.Zone(); return o }() {
				t.Fatalf("zone lost: %v", back.When)
			}
			if gotSig != sig {
				t.Fatalf("signature %q, want %q", gotSig, sig)
			}
			if sig != "" {
				var unsigned plumbing.MemoryObject
				if err := gc.EncodeWithoutSignature(&unsigned); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(payload, memContent(t, &unsigned)) {
					t.Fatalf("payload %q\nwant %q", payload, memContent(t, &unsigned))
				}
				if !bytes.Equal(payload, encodeCommit(c, "")) {
					t.Fatal("payload is not the unsigned encoding")
				}
			}
		}
	}
	for _, bad := range []string{"", "parent 0000\n\nmsg", "tree nothex\n\nmsg"} {
		if _, _, _, err := decodeCommit([]byte(bad)); err == nil {
			t.Fatalf("%q decoded", bad)
		}
	}
}

// A commit git writes, with headers rally never writes (encoding, a
// gpgsig git puts there), reads back with the store; its payload is the
// commit without the gpgsig lines, as git verifies it.
func TestReadCommitGitWrote(t *testing.T) {
	gd := gitRepo(t)
	tree := gitOut(t, gd, "mktree")
	raw := "tree " + tree + "\n" +
		"author A U Thor <a@example.com> 1764588600 +0100\n" +
		"committer C O Mitter <c@example.com> 1764588660 -0230\n" +
		"encoding ISO-8859-1\n" +
		"gpgsig -----BEGIN SSH SIGNATURE-----\n AAAA\n -----END SSH SIGNATURE-----\n" +
		"\nsubject\n\nbody\n"
	cmd := exec.Command("git", "--git-dir", gd, "hash-object", "-t", "commit", "-w", "--stdin", "--literally")
	cmd.Stdin = strings.NewReader(raw)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("hash-object: %v %s", err, out)
	}
	h, err := ParseHash(string(out))
	if err != nil {
		t.Fatal(err)
	}
	st, err := Open(gd)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sc, err := st.ReadSignedCommit(h)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Tree.String() != tree || len(sc.Parents) != 0 || sc.Message != "subject\n\nbody\n" {
		t.Fatalf("read %+v", sc.Commit)
	}
	if sc.When.Unix() != 1764588660 {
		t.Fatalf("committer time %v", sc.When)
	}
	if sc.Signature != "-----BEGIN SSH SIGNATURE-----\nAAAA\n-----END SSH SIGNATURE-----\n" {
		t.Fatalf("signature %q", sc.Signature)
	}
	wantPayload := strings.Replace(raw, "gpgsig -----BEGIN SSH SIGNATURE-----\n AAAA\n -----END SSH SIGNATURE-----\n", "", 1)
	if string(sc.Payload) != wantPayload {
		t.Fatalf("payload %q\nwant %q", sc.Payload, wantPayload)
	}
}
