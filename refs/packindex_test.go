package refs

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// Reading an object from a pack looks up ids by offset in a table of 8
// bytes an object (and a transient copy while it is sorted), not go-git's map of every offset (80 bytes an object:
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
	// The offset lookup alone, rally's table against go-git's map, each
	// on an index read afresh and whole (as after many lookups).
	lookup := func(find func(x *fullIndex) error) float64 {
		p := &packHandle{name: filepath.Base(mustGlob(t, filepath.Join(gd, "objects", "pack", "*.idx")))}
		x, err := p.index(filepath.Join(gd, "objects")).load()
		if err != nil {
			t.Fatal(err)
		}
		var a, b runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&a)
		if err := find(x); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&b)
		return float64(b.TotalAlloc-a.TotalAlloc) / n
	}
	off := func(x *fullIndex) int64 {
		o, err := x.FindOffset(plumbing.Hash(hs[n/2]))
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	tables := offsetTables.Load()
	ours := lookup(func(x *fullIndex) error {
		h, err := x.FindHash(off(x))
		if err == nil && h != plumbing.Hash(hs[n/2]) {
			err = fmt.Errorf("FindHash gives %s, want %s", h, hs[n/2])
		}
		return err
	})
	if offsetTables.Load() != tables+1 {
		t.Fatalf("%d offset tables made, want 1", offsetTables.Load()-tables)
	}
	theirs := lookup(func(x *fullIndex) error { _, err := x.MemoryIndex.FindHash(off(x)); return err })
	t.Logf("the id at an offset: %.1f bytes an object (go-git's map: %.1f)", ours, theirs)
	if ours > 20 || ours*3 > theirs {
		t.Fatalf("the offset table allocated %.1f bytes an object, go-git's map %.1f", ours, theirs)
	}
	// Every object's offset leads back to its id.
	x := (&packHandle{name: filepath.Base(mustGlob(t, filepath.Join(gd, "objects", "pack", "*.idx")))}).index(filepath.Join(gd, "objects"))
	for _, h := range hs {
		o, err := x.FindOffset(plumbing.Hash(h))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := x.FindHash(o); err != nil || got != plumbing.Hash(h) {
			t.Fatalf("FindHash(%d) = %s, %v; want %s", o, got, err, h)
		}
		if _, err := x.FindHash(o + 1); err == nil {
			t.Fatalf("FindHash(%d), inside an object, found one", o+1)
		}
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

// The offset table's sort orders keys by the bits asked, whatever the
// number of passes (odd ones end in the scratch copy).
func TestRadixSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		n      int
		lo, hi uint
	}{{0, 0, 10}, {1, 3, 40}, {1000, 10, 21}, {5000, 20, 50}, {100000, 17, 61}} {
		keys := make([]uint64, c.n)
		for i := range keys {
			keys[i] = (r.Uint64N(1<<(c.hi-c.lo)) << c.lo) | uint64(i)&(1<<c.lo-1)
		}
		want := slices.Clone(keys)
		slices.SortStableFunc(want, func(a, b uint64) int { return cmp.Compare(a>>c.lo, b>>c.lo) })
		radixSort(keys, c.lo, c.hi)
		if !slices.Equal(keys, want) {
			t.Fatalf("n %d bits %d-%d: not sorted", c.n, c.lo, c.hi)
		}
	}
}
