package refs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// bigPack makes a repository whose objects are all in one pack: n alike
// blobs (git stores most as deltas) in one commit's tree, packed by git
// gc. It returns the git dir and the blobs' ids in the order written.
func bigPack(t *testing.T, n int) (string, []Hash) {
	t.Helper()
	gd := gitRepo(t)
	var in strings.Builder
	for i := 0; i < n; i++ {
		b := fmt.Sprintf(`{"v":1,"kind":"note","tool":"codex:a","clock":%d,"subject":"the same subject, more or less, %d"}`+"\n", i, i%7)
		fmt.Fprintf(&in, "blob\nmark :%d\ndata %d\n%s\n", i+1, len(b), b)
	}
	fmt.Fprintf(&in, "commit refs/heads/main\ncommitter a <a@b> 0 +0000\ndata 2\nc\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&in, "M 100644 :%d f/%06d\n", i+1, i)
	}
	fmt.Fprintf(&in, "\n")
	fi := exec.Command("git", "--git-dir", gd, "fast-import", "--quiet", "--export-marks="+filepath.Join(t.TempDir(), "marks"))
	fi.Stdin = strings.NewReader(in.String())
	if out, err := fi.CombinedOutput(); err != nil {
		t.Fatalf("git fast-import: %v %s", err, out)
	}
	if out, err := exec.Command("git", "--git-dir", gd, "gc", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git gc: %v %s", err, out)
	}
	mustGlob(t, filepath.Join(gd, "objects", "pack", "*.pack"))
	ls := strings.Split(gitOut(t, gd, "ls-tree", "-r", "main"), "\n")
	hs := make([]Hash, 0, n)
	for _, l := range ls {
		h, err := ParseHash(strings.Fields(l)[2])
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	if len(hs) != n {
		t.Fatalf("%d blobs, want %d", len(hs), n)
	}
	return gd, hs
}

// A lookup of a few objects in a large pack (the head commit and the
// newest path after a `git gc`: the first warm claim at a million facts
// read a 58 MB index whole, 127 ms and 70 MB) reads the index in place,
// as git does: the fan-out, a binary search of the names, the offset.
// Counted: the bytes read from the .idx and the bytes allocated, against
// the index's size; reading many objects reads it whole once.
func TestPackedLookupReadsIndexInPlace(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 30k-object pack")
	}
	const n = 30000
	gd, hs := bigPack(t, n)
	fi, err := os.Stat(mustGlob(t, filepath.Join(gd, "objects", "pack", "*.idx")))
	if err != nil {
		t.Fatal(err)
	}
	size := fi.Size()
	st, err := Open(gd)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var missing Hash
	missing[0] = hs[n/2][0]
	measure := func(what string, f func()) (read, alloc int64) {
		var a, b runtime.MemStats
		runtime.GC()
		r0 := idxReadBytes.Load()
		runtime.ReadMemStats(&a)
		f()
		runtime.ReadMemStats(&b)
		read, alloc = idxReadBytes.Load()-r0, int64(b.TotalAlloc-a.TotalAlloc)
		t.Logf("%s: %d bytes read from a %d-byte index, %d allocated", what, read, size, alloc)
		return read, alloc
	}
	tables := offsetTables.Load()
	read, alloc := measure("HasObject, present and absent", func() {
		if !st.HasObject(hs[n/2]) || st.HasObject(missing) {
			t.Error("HasObject wrong")
		}
	})
	if read > 4096 || alloc > 16<<10 {
		t.Errorf("two ids looked up: %d bytes read, %d allocated; want ≤ 4 KiB and 16 KiB", read, alloc)
	}
	// A delta: its base's id is found by a scan of the 32-bit offsets.
	var blob []byte
	read, alloc = measure("ReadBlob", func() {
		if blob, err = st.ReadBlob(hs[n/3]); err != nil {
			t.Fatal(err)
		}
	})
	if want := gitOut(t, gd, "cat-file", "blob", hs[n/3].String()); string(blob) != want+"\n" {
		t.Fatalf("blob: %q, want %q", blob, want)
	}
	if read > size/4 || alloc > size/4 {
		t.Errorf("one blob read: %d bytes read, %d allocated of a %d-byte index; want ≤ 1/4 of it each", read, alloc, size)
	}
	if offsetTables.Load() != tables {
		t.Errorf("%d offset tables made for a few lookups, want 0", offsetTables.Load()-tables)
	}
	// Many reads: the index is read whole once, and every blob is git's.
	for i := 0; i < n; i += 7 {
		b, err := st.ReadBlob(hs[i])
		if err != nil {
			t.Fatal(err)
		}
		if i%997 == 0 {
			if want := gitOut(t, gd, "cat-file", "blob", hs[i].String()); string(b) != want+"\n" {
				t.Fatalf("blob %d: %q, want %q", i, b, want)
			}
		}
	}
	if got := offsetTables.Load() - tables; got != 1 {
		t.Errorf("%d offset tables made for %d reads, want 1", got, n/7)
	}
}
