package refs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// checkRuns checks that each run holds at most k ids, that the runs are
// the ids of ranges that do not overlap, in order, and that each run is
// in the order its ids were added (at, an id's order).
func checkRuns(t *testing.T, runs [][]Hash, k int, at map[Hash]int) {
	t.Helper()
	var top Hash
	for r, ids := range runs {
		if len(ids) > k {
			t.Fatalf("run %d: %d ids, at most %d", r, len(ids), k)
		}
		lo, hi := ids[0], ids[0]
		for j, h := range ids {
			if bytes.Compare(h[:], lo[:]) < 0 {
				lo = h
			}
			if bytes.Compare(h[:], hi[:]) > 0 {
				hi = h
			}
			if j > 0 && at[h] < at[ids[j-1]] {
				t.Fatalf("run %d: not in the order added at %d", r, j)
			}
		}
		if r > 0 && bytes.Compare(lo[:], top[:]) <= 0 {
			t.Fatalf("run %d starts at %s, below the run before's last %s", r, lo, top)
		}
		top = hi
	}
}

// A blob stream in runs hands every blob to fn once, reads them through
// a cat-file a run of at most k ids, each the ids of a range (the pages
// a cat-file touches of the pack's index), in the order they were added
// (the pack's), and reports a missing blob.
func TestBlobStreamInRuns(t *testing.T) {
	gd := gitRepo(t)
	st, _ := Open(gd)
	defer st.Close()
	var hs []Hash
	at := map[Hash]int{}
	for i := 0; i < 700; i++ {
		h, _ := st.WriteBlob([]byte(fmt.Sprintf("blob %d\n", i)))
		at[h] = i
		hs = append(hs, h)
	}
	var runs [][]Hash
	var mu sync.Mutex
	blobRunDone = func(ids []Hash) {
		mu.Lock()
		runs = append(runs, ids)
		mu.Unlock()
	}
	defer func() { blobRunDone = nil }()
	for _, k := range []int{1000, 256, 100, 7} {
		runs = nil
		seen := make([]int, len(hs))
		before := GitCount
		bs := st.NewBlobStream(func(i int, data []byte) {
			if want := fmt.Sprintf("blob %d\n", i); string(data) != want {
				t.Errorf("blob %d: %q, want %q", i, data, want)
			}
			mu.Lock()
			seen[i]++
			mu.Unlock()
		}).InRuns(k, len(hs))
		for i, h := range hs {
			bs.Add(i, h)
		}
		if err := bs.Close(); err != nil {
			t.Fatalf("runs of %d: %v", k, err)
		}
		for i, n := range seen {
			if n != 1 {
				t.Fatalf("runs of %d: blob %d handed over %d times", k, i, n)
			}
		}
		if want := (len(hs) + k - 1) / k; GitCount-before != want || len(runs) != want {
			t.Fatalf("runs of %d: %d cat-files, %d runs, want %d", k, GitCount-before, len(runs), want)
		}
		mu.Lock()
		checkRuns(t, sortedRuns(runs), k, at)
		mu.Unlock()
	}
	bs := st.NewBlobStream(func(int, []byte) {}).InRuns(100, 0)
	for i, h := range hs {
		if i == 333 {
			h = Hash{9}
		}
		bs.Add(i, h)
	}
	if err := bs.Close(); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a missing blob in runs: %v, want ErrNotFound", err)
	}
}

// sortedRuns orders runs read concurrently by their first id.
func sortedRuns(runs [][]Hash) [][]Hash {
	out := append([][]Hash(nil), runs...)
	low := func(ids []Hash) Hash {
		lo := ids[0]
		for _, h := range ids {
			if bytes.Compare(h[:], lo[:]) < 0 {
				lo = h
			}
		}
		return lo
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0; j-- {
			a, b := low(out[j-1]), low(out[j])
			if bytes.Compare(a[:], b[:]) <= 0 {
				break
			}
			out[j-1], out[j] = out[j], out[j-1]
		}
	}
	return out
}

// An exist check of a few ids asks one cat-file; past existHold it spills
// them to buckets by their first byte and asks each range of at most
// existRun ids of a cat-file of its own, in the order added, still
// counting every missing object, and leaves no file behind.
func TestExistCheckBuckets(t *testing.T) {
	gd := gitRepo(t)
	st, _ := Open(gd)
	defer st.Close()
	t.Setenv("TMPDIR", t.TempDir())
	var hs []Hash
	at := map[Hash]int{}
	for i := 0; i < 2000; i++ {
		h, _ := st.WriteBlob([]byte(fmt.Sprintf("object %d\n", i)))
		hs = append(hs, h)
	}
	// Missing ones among them: a blob's id with its last byte changed.
	for _, i := range []int{0, 999, 1999} {
		hs[i][19] ^= 0xff
	}
	for i, h := range hs {
		at[h] = i
	}
	var runs [][]Hash
	var mu sync.Mutex
	existRunDone = func(ids []Hash) {
		mu.Lock()
		runs = append(runs, ids)
		mu.Unlock()
	}
	defer func() { existRunDone = nil }()
	defer func(h, r int) { existHold, existRun = h, r }(existHold, existRun)
	for _, c := range []struct{ hold, run, procs int }{
		{4096, 100, 1}, // held: one cat-file
		{100, 100, -1}, // spilled, ranges of at most 100 ids
		{100, 3000, 1}, // spilled, one range
		{100, 5, -1},   // buckets larger than a run
	} {
		existHold, existRun = c.hold, c.run
		runs = nil
		before := GitCount
		x, _ := st.NewExistCheck()
		for _, h := range hs {
			x.Add(h)
		}
		missing, err := x.Close()
		if err != nil || missing != 3 {
			t.Fatalf("hold %d, runs of %d: %d missing, %v; want 3", c.hold, c.run, missing, err)
		}
		procs := GitCount - before
		if c.procs > 0 && procs != c.procs || c.procs < 0 && procs < len(hs)/c.run {
			t.Fatalf("hold %d, runs of %d: %d cat-files", c.hold, c.run, procs)
		}
		if procs != len(runs) {
			t.Fatalf("%d cat-files, %d runs", procs, len(runs))
		}
		if c.hold < len(hs) {
			checkRuns(t, sortedRuns(runs), c.run, at)
		}
		if left, _ := filepath.Glob(filepath.Join(os.Getenv("TMPDIR"), "*")); len(left) > 0 {
			t.Fatalf("left behind: %v", left)
		}
	}
}

// An object reader with a read budget starts a cat-file every budget
// reads, and reads every object right across them.
func TestObjectReaderBudget(t *testing.T) {
	gd := gitRepo(t)
	st, _ := Open(gd)
	defer st.Close()
	var trees []Hash
	for i := 0; i < 50; i++ {
		h, _ := st.WriteBlob([]byte(fmt.Sprintf("%d", i)))
		tr, _ := st.WriteTree([]Entry{{Name: fmt.Sprintf("f%d", i), Hash: h}})
		trees = append(trees, tr)
	}
	st.ReadBudget = 8
	before := GitCount
	r, err := st.NewObjectReader()
	if err != nil {
		t.Fatal(err)
	}
	for i, tr := range trees {
		es, err := r.ReadTree(tr)
		if err != nil || len(es) != 1 || es[0].Name != fmt.Sprintf("f%d", i) {
			t.Fatalf("tree %d: %v %v", i, es, err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := GitCount-before, (len(trees)+7)/8; got != want {
		t.Fatalf("%d cat-files for %d reads, budget 8: want %d", got, len(trees), want)
	}
}
