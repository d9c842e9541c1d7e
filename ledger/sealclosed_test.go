package ledger

import (
	"bytes"
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// segmentDirs lists the segments (facts/YYYY-MM/DD/NNNN) of tree.
func segmentDirs(t *testing.T, common string, tree refs.Hash) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(git(t, filepath.Dir(common), "ls-tree", "-r", "-d", "--name-only", tree.String()), "\n") {
		if strings.HasPrefix(line, factsDir+"/") && strings.Count(line, "/") == 3 {
			out = append(out, line)
		}
	}
	return out
}

// multiAppends appends batches of 1 to 100 facts (as plans, task splits
// and sync merges do) over days, the clock a few minutes a batch, until
// n facts are written, and returns the head's tree.
func multiAppends(t *testing.T, l *Ledger, now *time.Time, rng *rand.Rand, n int) refs.Hash {
	t.Helper()
	for written := 0; written < n; {
		k := min(1+rng.Intn(100), n-written)
		*now = now.Add(time.Duration(30+rng.Intn(180)) * time.Minute)
		if _, err := l.Append(func(st *facts.State, at time.Time) ([]*facts.Fact, error) {
			var fs []*facts.Fact
			for j := 0; j < k; j++ {
				f := &facts.Fact{Kind: facts.KindNote, Tool: "a", Subject: fmt.Sprintf("n%d", written+j)}
				if rng.Intn(3) == 0 {
					f = &facts.Fact{Kind: facts.KindClaim, Tool: "a", Scopes: []string{fmt.Sprintf("file:f%d", rng.Intn(500))}, LeaseS: 3600}
				}
				fs = append(fs, f)
			}
			return fs, nil
		}); err != nil {
			t.Fatal(err)
		}
		written += k
	}
	h, err := l.Head()
	if err != nil {
		t.Fatal(err)
	}
	c, err := l.Store.ReadCommit(h)
	if err != nil {
		t.Fatal(err)
	}
	return c.Tree
}

// The segment blob of every segment that is not the one appends go on
// writing: a day's last segment but the newest day's.
func wantSealed(segs []string) map[string]bool {
	want := map[string]bool{}
	for i, s := range segs {
		if i+1 < len(segs) {
			want[s+segBlobExt] = true
		}
	}
	return want
}

// A ledger written by appends of many facts at once (which close a
// segment below 256 when the next batch does not fit, and a day's last
// segment when the next day starts) has a segment blob for every closed
// segment, and a cold read reads each as that one blob: the objects it
// asks of the store are the segments and the trees, not the facts, and
// it computes what reading every fact blob computes.
func TestMultiFactAppendsSealClosedSegments(t *testing.T) {
	now := t0
	_, cs := network(t, 1, &now)
	c := cs[0]
	l := c.ledger(t)
	const n = 2500
	tree := multiAppends(t, l, &now, rand.New(rand.NewSource(31)), n)
	segs := segmentDirs(t, c.common(), tree)
	days := map[string]bool{}
	for _, s := range segs {
		days[filepath.Dir(s)] = true
	}
	if len(segs) < 12 || len(days) < 3 || len(segs) <= n/segMax+1 {
		t.Fatalf("%d segments in %d days for %d facts: want segments closed below %d over days", len(segs), len(days), n, segMax)
	}
	got := treePaths(t, c.common(), tree, segBlobExt)
	want := wantSealed(segs)
	if len(got) != len(want) {
		t.Fatalf("%d segment blobs for %d segments, want %d (every one but the last)", len(got), len(segs), len(want))
	}
	for _, p := range got {
		if !want[p] {
			t.Fatalf("segment blob %s of the segment appends write", p)
		}
	}
	if u, err := l.Unsealed(); err != nil || u != 0 {
		t.Fatalf("Unsealed: %d, %v", u, err)
	}
	inc, err := l.Read()
	if err != nil {
		t.Fatal(err)
	}
	l2, cold, objs := coldRead(t, c.common(), now)
	if g, w := stateKey(t, cold), stateKey(t, inc); g != w {
		t.Fatalf("cold read differs from the appends' projection:\n got %s\nwant %s", g, w)
	}
	checkAsBlobs(t, "cold", c.common(), now, tree, l2, cold)
	// The commit, root, facts/, months, days, a blob a closed segment, the
	// last segment's tree and its facts (at most segMax).
	if max := int64(3+len(days)+len(segs)+2) + segMax; objs > max {
		t.Fatalf("the cold read asked %d objects of the store for %d facts in %d segments, want at most %d", objs, n, len(segs), max)
	}
	ps, err := l2.Doctor(1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		t.Fatalf("doctor: %v", p)
	}
}

// A ledger written before appends sealed closed segments (their segment
// blobs removed) gets them from SealClosed, in one commit of no fact:
// the same blobs the appends wrote (a pure function of the facts), the
// same tree; the warm projection catches up over it with nothing new,
// and a cold read reads them.
func TestSealClosedOldLedger(t *testing.T) {
	now := t0
	_, cs := network(t, 1, &now)
	c := cs[0]
	l := c.ledger(t)
	sealed := multiAppends(t, l, &now, rand.New(rand.NewSource(7)), 1800)
	blobs := treePaths(t, c.common(), sealed, segBlobExt)
	old := sealed
	for _, p := range blobs {
		old = setPath(t, l, old, p, refs.ZeroHash)
	}
	head, _ := l.Head()
	oc, err := l.Store.WriteCommit(refs.Commit{Tree: old, Parents: []refs.Hash{head}, Message: "old\n", When: now})
	if err != nil {
		t.Fatal(err)
	}
	setHead(t, l, oc)
	before, err := l.Read()
	if err != nil {
		t.Fatal(err)
	}
	if u, err := l.Unsealed(); err != nil || u != len(blobs) {
		t.Fatalf("Unsealed: %d, %v; want %d", u, err, len(blobs))
	}
	res, err := l.SealClosed()
	if err != nil {
		t.Fatal(err)
	}
	if res.Segments != len(blobs) {
		t.Fatalf("sealed %d segments, want %d", res.Segments, len(blobs))
	}
	sc, err := l.Store.ReadCommit(res.Head)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Tree != sealed || len(sc.Parents) != 1 || sc.Parents[0] != oc || !strings.HasPrefix(sc.Message, SealPrefix) {
		t.Fatalf("the sealing commit: tree %s (the appends' %s), parents %v, %q", sc.Tree, sealed, sc.Parents, sc.Message)
	}
	after, err := l.Read()
	if err != nil {
		t.Fatal(err)
	}
	before.Head, before.Tree = after.Head, after.Tree
	if g, w := stateKey(t, after), stateKey(t, before); g != w {
		t.Fatalf("the projection changed over the sealing commit:\n got %s\nwant %s", g, w)
	}
	if res, err := l.SealClosed(); err != nil || res.Segments != 0 {
		t.Fatalf("sealing again: %+v, %v", res, err)
	}
	l2, cold, _ := coldRead(t, c.common(), now)
	checkAsBlobs(t, "cold", c.common(), now, sealed, l2, cold)
	ps, err := l2.Doctor(1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		t.Fatalf("doctor: %v", p)
	}
}

// Two clones that went on from one segment of 200 facts, one with an
// append that did not fit (closing it at 200, sealed) and one with 30
// facts more in it, merge in either order into one tree, where the
// merged segment (230 facts, closed: the other side's segment follows)
// has the segment blob of its facts, believed by a cold read.
func TestMergeSealsClosedSegment(t *testing.T) {
	common, l, now := rebuildLedger(t)
	tree, _ := sealedLedger(t, l, rand.New(rand.NewSource(6)), 2, 200, now)
	base, _ := l.Head()
	when := now.Add(-time.Minute)
	side := func(name string, n int) refs.Hash {
		var fs []*facts.Fact
		for i := 0; i < n; i++ {
			f := &facts.Fact{V: 1, Kind: facts.KindNote, Tool: name, Subject: fmt.Sprintf("%s %d", name, i), Clock: int64(10000 + i), At: facts.FormatTime(when)}
			f.Seal()
			fs = append(fs, f)
		}
		t2, err := l.addFacts(tree, when, fs)
		if err != nil {
			t.Fatal(err)
		}
		c, err := l.Store.WriteCommit(refs.Commit{Tree: t2, Parents: []refs.Hash{base}, Message: name + "\n", When: now})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a, b := side("a", 100), side("b", 30)
	day := strings.Join(LayoutDirs(when), "/")
	ac, _ := l.Store.ReadCommit(a)
	if got := treePaths(t, common, ac.Tree, segBlobExt); !strings.Contains(strings.Join(got, " "), day+"/0000"+segBlobExt) {
		t.Fatalf("the append that did not fit left segment 0000 unsealed: %v", got)
	}
	merged := func(ours, theirs refs.Hash) refs.Hash {
		setHead(t, l, ours)
		mr, err := l.Merge(theirs, MergeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c, err := l.Store.ReadCommit(mr.New)
		if err != nil {
			t.Fatal(err)
		}
		return c.Tree
	}
	ab, ba := merged(a, b), merged(b, a)
	if ab != ba {
		t.Fatalf("merged trees differ with the order: %s and %s", ab, ba)
	}
	got := blobAt(t, l, ab, day+"/0000"+segBlobExt)
	if n := bytes.Count(got, []byte("\n")); n != 230 {
		t.Fatalf("the merged segment's blob holds %d lines, want 230", n)
	}
	for _, p := range treePaths(t, common, ab, segBlobExt) {
		if p == day+"/0001"+segBlobExt {
			t.Fatalf("segment blob %s of the segment appends write", p)
		}
	}
	l2, st, _ := coldRead(t, common, now)
	checkAsBlobs(t, "merged", common, now, ba, l2, st)
	ps, _ := l2.Doctor(1000)
	for _, p := range ps {
		if p.Code == SegmentBlobCode {
			t.Fatalf("doctor after the merge: %v", p)
		}
	}
}
