package refs

import (
	"errors"
	"strings"
	"sync"
	"testing"
)

// A blob stream hands every blob asked for to fn exactly once, whatever
// the number of cat-file processes it deals the ids to, starts one
// process per BatchThreshold ids up to one per core (at most 4), and
// reports a missing blob without hanging, however many ids follow it.
func TestBlobStream(t *testing.T) {
	gd := gitRepo(t)
	st, _ := Open(gd)
	defer st.Close()
	var hs []Hash
	for i := 0; i < 3*BatchThreshold+streamChunk/2; i++ {
		h, _ := st.WriteBlob([]byte(strings.Repeat("z", i%301) + "\n" + string(rune('a'+i%26))))
		hs = append(hs, h)
	}
	for _, n := range []int{1, streamChunk, BatchThreshold + 1, len(hs)} {
		var mu sync.Mutex
		seen := map[int]int{}
		before := GitCount
		bs := st.NewBlobStream(func(i int, data []byte) {
			want, _ := st.ReadBlob(hs[i])
			if string(data) != string(want) {
				t.Errorf("blob %d: %q, want %q", i, data, want)
			}
			mu.Lock()
			seen[i]++
			mu.Unlock()
		})
		for i := 0; i < n; i++ {
			bs.Add(i, hs[i])
		}
		if err := bs.Close(); err != nil {
			t.Fatalf("%d blobs: %v", n, err)
		}
		for i := 0; i < n; i++ {
			if seen[i] != 1 {
				t.Fatalf("%d blobs: blob %d handed over %d times", n, i, seen[i])
			}
		}
		procs := GitCount - before
		want := min(bs.limit, ((n-1)/streamChunk)*streamChunk/BatchThreshold+1)
		if procs != want {
			t.Errorf("%d blobs: %d cat-file processes, want %d", n, procs, want)
		}
	}
	for _, at := range []int{0, BatchThreshold, len(hs) - 1} {
		bs := st.NewBlobStream(func(int, []byte) {})
		for i, h := range hs {
			if i == at {
				h = Hash{9}
			}
			bs.Add(i, h)
		}
		if err := bs.Close(); !errors.Is(err, ErrNotFound) {
			t.Fatalf("missing blob at %d: %v, want ErrNotFound", at, err)
		}
	}
}
