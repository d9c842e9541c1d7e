package refs

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// Reading an object from a pack looks up ids by offset in a table of 16
// bytes an object, not go-git's map of every offset (80 bytes an object:
// doctor at a million facts held 292 MB, 80 MB of it that map). Counted:
// the bytes the first read from a packed store allocates per object in
// the pack; and every object read back, deltas included, is git's.
func TestPackedReadIndexesOffsetsCompactly(t *testing.T) {
	gd := gitRepo(t)
	st, _ := Open(gd)
	const n = 6000
	var hs []Hash
	for i := 0; i < n; i++ {
		// Alike, so that git stores most of them as deltas.
		h, err := st.WriteBlob([]byte(fmt.Sprintf(`{"v":1,"kind":"note","tool":"codex:a","clock":%d,"subject":"the same subject, more or less, %d"}`+"\n", i, i%7)))
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	st.Close()
	var info strings.Builder
	for _, h := range hs {
		fmt.Fprintf(&info, "100644 %s\tf/%s\n", h, h)
	}
	ui := exec.Command("git", "--git-dir", gd, "update-index", "--add", "--index-info")
	ui.Stdin = strings.NewReader(info.String())
	if out, err := ui.CombinedOutput(); err != nil {
		t.Fatalf("git update-index: %v %s", err, out)
	}
	gitOut(t, gd, "commit", "-q", "-m", "blobs")
	if out, err := exec.Command("git", "--git-dir", gd, "gc", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git gc: %v %s", err, out)
	}
	if m, _ := filepath.Glob(filepath.Join(gd, "objects", "pack", "*.pack")); len(m) != 1 {
		t.Fatalf("%d packs, want 1", len(m))
	}
	st, _ = Open(gd)
	defer st.Close()
	tables := offsetTables.Load()
	if _, err := st.ReadBlob(hs[n/2]); err != nil {
		t.Fatal(err)
	}
	if offsetTables.Load() != tables+1 {
		t.Fatalf("%d offset tables made, want 1", offsetTables.Load()-tables)
	}
	// The offset lookup alone, rally's table against go-git's map, each
	// on an index read afresh.
	lookup := func(find func(x *packIndex) error) float64 {
		p := &packHandle{name: filepath.Base(mustGlob(t, filepath.Join(gd, "objects", "pack", "*.idx")))}
		x := p.index(filepath.Join(gd, "objects"))
		var a, b runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&a)
		if err := find(x); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&b)
		return float64(b.TotalAlloc-a.TotalAlloc) / n
	}
	off := func(x *packIndex) int64 {
		o, err := x.FindOffset(plumbing.Hash(hs[n/2]))
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	ours := lookup(func(x *packIndex) error {
		h, err := x.FindHash(off(x))
		if err == nil && h != plumbing.Hash(hs[n/2]) {
			err = fmt.Errorf("FindHash gives %s, want %s", h, hs[n/2])
		}
		return err
	})
	theirs := lookup(func(x *packIndex) error { _, err := x.MemoryIndex.FindHash(off(x)); return err })
	t.Logf("the id at an offset: %.1f bytes an object (go-git's map: %.1f)", ours, theirs)
	if ours > 20 || ours*3 > theirs {
		t.Fatalf("the offset table allocated %.1f bytes an object, go-git's map %.1f", ours, theirs)
	}
	for i := 0; i < n; i += 97 {
		got, err := st.ReadBlob(hs[i])
		if err != nil {
			t.Fatal(err)
		}
		if want := gitOut(t, gd, "cat-file", "blob", hs[i].String()); string(got) != want+"\n" {
			t.Fatalf("blob %d: %q, want %q", i, got, want)
		}
	}
}

func mustGlob(t *testing.T, pat string) string {
	t.Helper()
	m, _ := filepath.Glob(pat)
	if len(m) != 1 {
		t.Fatalf("%s: %d matches", pat, len(m))
	}
	return m[0]
}
