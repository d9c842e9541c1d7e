package refs

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The store reads what git packed (deltas included), sees a pack a repack
// wrote after the store listed the packs, and reads through alternates
// with relative and absolute paths, as git does.
func TestObjectsPackedAndAlternates(t *testing.T) {
	gd := gitRepo(t)
	st, err := Open(gd)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// Similar blobs, so the repack stores most of them as deltas.
	var blobs []Hash
	var want [][]byte
	base := bytes.Repeat([]byte("a line of a fact, long enough to delta against\n"), 80)
	for i := range 40 {
		b := append(append([]byte(nil), base...), fmt.Sprintf("fact %d\n", i)...)
		h, err := st.WriteBlob(b)
		if err != nil {
			t.Fatal(err)
		}
		blobs, want = append(blobs, h), append(want, b)
	}
	tree, err := st.WriteTree([]Entry{{Name: "f", Hash: blobs[0]}})
	if err != nil {
		t.Fatal(err)
	}
	// The store lists the packs (none yet) before the repack.
	if _, err := st.ReadBlob(blobs[0]); err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, h := range blobs {
		args = append(args, h.String())
	}
	args = append(args, tree.String())
	cmd := exec.Command("git", "--git-dir", gd, "pack-objects", "-q", filepath.Join(gd, "objects", "pack", "pack"))
	cmd.Stdin = strings.NewReader(strings.Join(args, "\n") + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pack-objects: %v %s", err, out)
	}
	gitOut(t, gd, "prune-packed")
	if n := len(looseFiles(t, gd)); n != 0 {
		t.Fatalf("%d loose objects left after prune-packed", n)
	}
	if !strings.Contains(gitOut(t, gd, "verify-pack", "-v", packIdx(t, gd)), "chain length") {
		t.Fatal("the pack has no deltas; the test would not read one")
	}
	for i, h := range blobs {
		got, err := st.ReadBlob(h)
		if err != nil {
			t.Fatalf("blob %d after repack: %v", i, err)
		}
		if !bytes.Equal(got, want[i]) {
			t.Fatalf("blob %d reads %q", i, got)
		}
	}
	if es, err := st.ReadTree(tree); err != nil || len(es) != 1 || es[0].Hash != blobs[0] {
		t.Fatalf("tree from the pack: %v %v", es, err)
	}
	if _, err := st.ReadTree(blobs[1]); err == nil {
		t.Fatal("a blob read as a tree")
	}
	fresh, err := Open(gd)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if !fresh.HasObject(blobs[3]) || fresh.HasObject(Hash{1}) {
		t.Fatal("HasObject on packed objects")
	}

	for _, rel := range []bool{true, false} {
		other := gitRepo(t)
		path := filepath.Join(gd, "objects")
		if rel {
			var err error
			if path, err = filepath.Rel(filepath.Join(other, "objects"), path); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(other, "objects", "info", "alternates"), []byte("# borrowed\n"+path+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := gitOut(t, other, "cat-file", "-t", blobs[5].String()); got != "blob" {
			t.Fatalf("git does not read through the alternates file: %s", got)
		}
		ost, err := Open(other)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ost.ReadBlob(blobs[5])
		if err != nil || !bytes.Equal(got, want[5]) {
			t.Fatalf("through alternates (relative %v): %q %v", rel, got, err)
		}
		if !ost.HasObject(tree) {
			t.Fatalf("HasObject through alternates (relative %v)", rel)
		}
		ost.Close()
	}
}

func looseFiles(t *testing.T, gd string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(gd, "objects", "??", "*"))
	return m
}

func packIdx(t *testing.T, gd string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(gd, "objects", "pack", "*.idx"))
	if len(m) != 1 {
		t.Fatalf("packs: %v", m)
	}
	return m[0]
}
