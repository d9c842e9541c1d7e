package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// sealedLedger writes segs full segments (two a day, each filled by four
// appends of 64 facts, so each gets its segment blob) and then tail facts
// in a segment of their own, and moves the ledger's ref to the last
// commit. The facts are of every kind, some retractions, some dated in
// the future, and now and then a corrupt one (stored under its id, its
// content altered) that a read skips with a warning.
func sealedLedger(t *testing.T, l *Ledger, rng *rand.Rand, segs, tail int, now time.Time) (refs.Hash, []*facts.Fact) {
	t.Helper()
	tools := []string{"a", "b", "c"}
	scopes := []string{"file:x", "file:y", "dir:d", "file:d/e"}
	var all []*facts.Fact
	var tree, head refs.Hash
	clock := int64(0)
	start := now.Truncate(24 * time.Hour).Add(-time.Duration(segs/2+1) * 24 * time.Hour)
	batch := func(n int, when time.Time) {
		var fs []*facts.Fact
		for j := 0; j < n; j++ {
			clock++
			tool := tools[rng.Intn(len(tools))]
			var f facts.Fact
			switch rng.Intn(8) {
			case 0, 1:
				f = facts.Fact{Kind: facts.KindClaim, Tool: tool, Scopes: []string{scopes[rng.Intn(len(scopes))]}, LeaseS: 1800, Access: facts.Exclusive}
			case 2:
				f = facts.Fact{Kind: facts.KindRelease, Tool: tool, Ref: pick(rng, all, facts.KindClaim)}
			case 3:
				f = facts.Fact{Kind: facts.KindHandoff, Tool: tool, Target: tools[rng.Intn(len(tools))], Subject: "h"}
			case 4:
				if ref := pick(rng, all, ""); ref != "" {
					f = facts.Fact{Kind: facts.KindRetract, Tool: authorOf(all, ref), Ref: ref}
				} else {
					f = facts.Fact{Kind: facts.KindNote, Tool: tool, Subject: "n"}
				}
			case 5:
				f = facts.Fact{Kind: facts.KindRisk, Tool: tool, Subject: "r"}
			default:
				f = facts.Fact{Kind: facts.KindNote, Tool: tool, Subject: fmt.Sprintf("n%d", clock), Body: "line one\nline \"two\""}
			}
			f.V, f.Clock, f.At = 1, clock, facts.FormatTime(when.Add(time.Duration(j)*time.Second))
			if rng.Intn(50) == 0 {
				f.At = facts.FormatTime(now.Add(time.Hour)) // dated in the future
			}
			f.Seal()
			if rng.Intn(100) == 0 {
				forged := f
				forged.Raw = bytes.Replace(f.Raw, []byte(`"tool":"`), []byte(`"tool":"x`), 1)
				fs = append(fs, &forged) // its id no longer its content's
				continue
			}
			fs = append(fs, &f)
			all = append(all, &f)
		}
		var err error
		if tree, err = l.addFacts(tree, when, fs); err != nil {
			t.Fatal(err)
		}
		var parents []refs.Hash
		if !head.IsZero() {
			parents = []refs.Hash{head}
		}
		if head, err = l.Store.WriteCommit(refs.Commit{Tree: tree, Parents: parents, Message: "gen\n", When: when}); err != nil {
			t.Fatal(err)
		}
	}
	for s := 0; s < segs; s++ {
		when := start.Add(time.Duration(s) * 12 * time.Hour)
		for b := 0; b < 4; b++ {
			batch(segMax/4, when.Add(time.Duration(b)*time.Minute))
		}
	}
	if tail > 0 {
		batch(tail, now.Add(-time.Minute))
	}
	setHead(t, l, head)
	return tree, all
}

func setHead(t *testing.T, l *Ledger, head refs.Hash) {
	t.Helper()
	lock, err := l.Store.LockRef(LedgerRef)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()
	if err := lock.Commit(head); err != nil {
		t.Fatal(err)
	}
}

// treePaths lists the paths under tree ending in suffix.
func treePaths(t *testing.T, common string, tree refs.Hash, suffix string) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(git(t, filepath.Dir(common), "ls-tree", "-r", "--name-only", tree.String()), "\n") {
		if strings.HasSuffix(line, suffix) {
			out = append(out, line)
		}
	}
	return out
}

// coldRead reads the ledger with its cache deleted, counting the objects
// asked of the store (in-process reads and cat-file's).
func coldRead(t *testing.T, common string, now time.Time) (*Ledger, *facts.State, int64) {
	t.Helper()
	os.RemoveAll(filepath.Join(common, "rally", "cache"))
	l, err := Open(common, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	l.NoTracking = true
	objs := refs.StreamedBlobs.Load() + refs.ObjectsRead.Load()
	st, err := l.Read()
	if err != nil {
		t.Fatal(err)
	}
	return l, st, refs.StreamedBlobs.Load() + refs.ObjectsRead.Load() - objs
}

// checkAsBlobs holds a cold read's projection, warnings and mirror to
// what reading every fact blob of tree (no segment blob) gives.
func checkAsBlobs(t *testing.T, what, common string, now time.Time, tree refs.Hash, l *Ledger, st *facts.State) {
	t.Helper()
	want, all, warns := oldRebuild(t, common, now, tree)
	want.Head, want.Tree = st.Head, st.Tree
	if g, w := stateKey(t, st), stateKey(t, want); g != w {
		t.Fatalf("%s: projection differs from the blobs':\n got %s\nwant %s", what, g, w)
	}
	if !reflect.DeepEqual(l.Warnings, warns) {
		t.Fatalf("%s: warnings\n got %q\nwant %q", what, l.Warnings, warns)
	}
	var mirror []byte
	for _, f := range sortedCopy(all) {
		mirror = append(mirror, f.Raw...)
	}
	if got, ok := l.cache.mirrorBytes(st); !ok || !bytes.Equal(got, mirror) {
		t.Fatalf("%s: mirror differs (%v): %d bytes, want %d", what, ok, len(got), len(mirror))
	}
}

// A cold read of a ledger of full segments reads a segment blob for each
// of them, not their blobs: the objects it asks of the store grow with
// the segments, not the facts, and it computes what reading every blob
// computes (projection, warnings, mirror).
func TestColdReadReadsSegmentBlobs(t *testing.T) {
	for _, segs := range []int{1, 12} { // in-process, and through cat-file
		t.Run(fmt.Sprint(segs), func(t *testing.T) {
			common, l, now := rebuildLedger(t)
			tree, all := sealedLedger(t, l, rand.New(rand.NewSource(int64(segs))), segs, 10, now)
			if got := treePaths(t, common, tree, segBlobExt); len(got) != segs {
				t.Fatalf("%d segment blobs in the tree (%v), want %d", len(got), got, segs)
			}
			l2, st, objs := coldRead(t, common, now)
			// The trees (root, facts/, month, days, the two newest
			// segments'), the commit, a segment blob a segment and the
			// tail's 10 blobs.
			if max := int64(segs + 10 + segs/2 + 12); objs > max {
				t.Fatalf("the cold read asked %d objects of the store for %d facts in %d full segments, want at most %d", objs, len(all), segs, max)
			}
			if len(l2.Warnings) == 0 && segs > 1 {
				t.Fatal("no corrupt fact in the ledger: generate some")
			}
			checkAsBlobs(t, "cold", common, now, tree, l2, st)
			if got := len(l2.cache.headPath(st.Tree)); got != 5 {
				t.Fatalf("the read kept %d trees of the newest path, want 5 (root, facts, month, day, segment)", got)
			}
		})
	}
}

// setPath returns root with the blob at p (a/b/c) set to h, or removed
// when h is zero.
func setPath(t *testing.T, l *Ledger, root refs.Hash, p string, h refs.Hash) refs.Hash {
	t.Helper()
	es, err := l.Store.ReadTree(root)
	if err != nil {
		t.Fatal(err)
	}
	name, rest, sub := strings.Cut(p, "/")
	var out []refs.Entry
	done := false
	for _, e := range es {
		if e.Name != name {
			out = append(out, e)
			continue
		}
		done = true
		switch {
		case sub:
			out = append(out, refs.Entry{Name: name, Dir: true, Hash: setPath(t, l, e.Hash, rest, h)})
		case !h.IsZero():
			out = append(out, refs.Entry{Name: name, Hash: h})
		}
	}
	if !done && !sub && !h.IsZero() {
		out = append(out, refs.Entry{Name: name, Hash: h})
	}
	nt, err := l.Store.WriteTree(out)
	if err != nil {
		t.Fatal(err)
	}
	return nt
}

func blobAt(t *testing.T, l *Ledger, root refs.Hash, p string) []byte {
	t.Helper()
	h := root
	for _, name := range strings.Split(p, "/") {
		es, err := l.Store.ReadTree(h)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, e := range es {
			if e.Name == name {
				h, found = e.Hash, true
			}
		}
		if !found {
			t.Fatalf("%s: no %s", p, name)
		}
	}
	b, err := l.Store.ReadBlob(h)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A segment blob that is not exactly its segment's facts (a line
// removed, added, altered or moved, another segment's blob, one stale
// after more facts joined the segment) is not believed: the facts come
// from the segment's blobs, the projection is the one they give, and
// doctor names the segment blob.
func TestForgedSegmentBlobIgnored(t *testing.T) {
	common, l, now := rebuildLedger(t)
	tree, all := sealedLedger(t, l, rand.New(rand.NewSource(3)), 4, 5, now)
	sbs := treePaths(t, common, tree, segBlobExt)
	if len(sbs) != 4 {
		t.Fatalf("segment blobs %v, want 4", sbs)
	}
	target := sbs[0]
	orig := blobAt(t, l, tree, target)
	lines := bytes.SplitAfter(orig, []byte("\n"))
	lines = lines[:len(lines)-1] // the empty tail
	intruder := &facts.Fact{V: 1, Kind: facts.KindClaim, Tool: "mallory", Scopes: []string{"file:x"}, Access: facts.Exclusive,
		Clock: 1 << 40, At: facts.FormatTime(now.Add(-time.Minute))}
	intruder.Seal()
	join := func(ls ...[]byte) []byte { return bytes.Join(ls, nil) }
	insert := func(line []byte) []byte {
		id, _ := lineID(line)
		var out [][]byte
		done := false
		for _, l := range lines {
			lid, _ := lineID(l)
			if !done && string(id) < string(lid) {
				out, done = append(out, line), true
			}
			out = append(out, l)
		}
		if !done {
			out = append(out, line)
		}
		return join(out...)
	}
	// The segment's blob as it was before its last fact was added.
	stale := join(lines[:len(lines)-1]...)
	moved := append([][]byte{lines[1], lines[0]}, lines[2:]...)
	altered := append([][]byte(nil), lines...)
	altered[7] = bytes.Replace(altered[7], []byte(`"at":"`), []byte(`"at":"1`), 1)
	forgeries := map[string][]byte{
		"line removed":  join(append(append([][]byte(nil), lines[:10]...), lines[11:]...)...),
		"line added":    insert(intruder.Raw),
		"line altered":  join(altered...),
		"lines moved":   join(moved...),
		"other segment": blobAt(t, l, tree, sbs[1]),
		"stale":         stale,
		"not lines":     orig[:len(orig)-1],
	}
	for what, data := range forgeries {
		t.Run(what, func(t *testing.T) {
			h, err := l.Store.WriteBlob(data)
			if err != nil {
				t.Fatal(err)
			}
			ft := setPath(t, l, tree, target, h)
			head, _ := l.Head()
			c, err := l.Store.WriteCommit(refs.Commit{Tree: ft, Parents: []refs.Hash{head}, Message: "forged\n", When: now})
			if err != nil {
				t.Fatal(err)
			}
			setHead(t, l, c)
			l2, st, _ := coldRead(t, common, now)
			checkAsBlobs(t, what, common, now, ft, l2, st)
			if n := st.Claims.Len(); n == 0 {
				t.Fatal("no open claim: generate some")
			}
			for _, cl := range st.Claims.All() {
				if cl.Tool == "mallory" {
					t.Fatalf("the forged segment blob's claim %s is in the room", cl.ID)
				}
			}
			ps, err := l2.Doctor(1000)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range ps {
				if p.Code == SegmentBlobCode {
					got = append(got, p.Path)
				}
			}
			if !reflect.DeepEqual(got, []string{target}) {
				t.Fatalf("doctor's %s findings %v, want %s (all: %v)", SegmentBlobCode, got, target, ps)
			}
		})
	}
	// The true segment blob: believed, and doctor is quiet about it.
	head, _ := l.Head()
	c, _ := l.Store.WriteCommit(refs.Commit{Tree: tree, Parents: []refs.Hash{head}, Message: "back\n", When: now})
	setHead(t, l, c)
	l2, st, _ := coldRead(t, common, now)
	checkAsBlobs(t, "true", common, now, tree, l2, st)
	ps, _ := l2.Doctor(1000)
	for _, p := range ps {
		if p.Code == SegmentBlobCode {
			t.Fatalf("doctor names a true segment blob: %v", p)
		}
	}
	_ = all
}

// Two ledgers that filled the same segment each with facts of their own
// merge, in either order, into the same tree: the merged segment's blob
// is made again from the merged segment, a segment neither side changed
// keeps its blob, and the catch-up over the merge takes no segment blob
// for a fact and sees nothing lost.
func TestMergeSegmentBlobsEitherOrder(t *testing.T) {
	common, l, now := rebuildLedger(t)
	// A full day before (its segment blob shared), then 200 facts.
	tree, _ := sealedLedger(t, l, rand.New(rand.NewSource(5)), 2, 200, now)
	base, _ := l.Head()
	side := func(name string, n int) refs.Hash {
		var fs []*facts.Fact
		for i := 0; i < n; i++ {
			f := &facts.Fact{V: 1, Kind: facts.KindNote, Tool: name, Subject: fmt.Sprintf("%s %d", name, i), Clock: int64(10000 + i),
				At: facts.FormatTime(now.Add(-time.Minute))}
			f.Seal()
			fs = append(fs, f)
		}
		t2, err := l.addFacts(tree, now.Add(-time.Minute), fs[:segMax-200])
		if err == nil {
			t2, err = l.addFacts(t2, now.Add(-time.Minute), fs[segMax-200:])
		}
		if err != nil {
			t.Fatal(err)
		}
		c, err := l.Store.WriteCommit(refs.Commit{Tree: t2, Parents: []refs.Hash{base}, Message: name + "\n", When: now})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	// Each side fills the tail's segment (200 + 56: its segment blob)
	// and starts the next.
	a, b := side("a", 60), side("b", 70)
	merged := func(ours, theirs refs.Hash) refs.Hash {
		setHead(t, l, ours)
		mr, err := l.Merge(theirs, MergeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if mr.Kind != MergeCommit || mr.Conflicts != 0 {
			t.Fatalf("merge: %+v", mr)
		}
		c, err := l.Store.ReadCommit(mr.New)
		if err != nil {
			t.Fatal(err)
		}
		return c.Tree
	}
	ab, ba := merged(a, b), merged(b, a)
	if ab != ba {
		t.Fatalf("merged trees differ with the order: %s and %s\n%s\n%s", ab, ba,
			strings.Join(treePaths(t, common, ab, segBlobExt), " "), strings.Join(treePaths(t, common, ba, segBlobExt), " "))
	}
	ac, _ := l.Store.ReadCommit(a)
	day := strings.Join(LayoutDirs(now.Add(-time.Minute)), "/")
	for _, p := range treePaths(t, common, ab, segBlobExt) {
		if strings.HasPrefix(p, day+"/") && p != day+"/0000"+segBlobExt {
			t.Fatalf("segment blob %s of a segment that is not full", p)
		}
	}
	if got := blobAt(t, l, ab, day+"/0000"+segBlobExt); bytes.Equal(got, blobAt(t, l, ac.Tree, day+"/0000"+segBlobExt)) {
		t.Fatal("the merged segment kept a side's segment blob")
	}
	// The merged ledger reads as its blobs do, its segment blobs all
	// believed.
	l2, st, _ := coldRead(t, common, now)
	checkAsBlobs(t, "merged", common, now, ba, l2, st)
	ps, _ := l2.Doctor(1000)
	for _, p := range ps {
		if p.Code == SegmentBlobCode {
			t.Fatalf("doctor after the merge: %v", p)
		}
	}
	// A catch-up from a side to the merge: the other side's facts, none
	// a segment blob, nothing lost although a segment blob changed.
	added, err := l.diff(ac.Tree, ab)
	if err != nil {
		t.Fatalf("catch-up over the merge: %v", err)
	}
	if len(added) != 70 {
		t.Fatalf("the catch-up found %d new blobs, want the other side's 70", len(added))
	}
	for _, r := range added {
		if !strings.HasSuffix(r.path, ".json") {
			t.Fatalf("the catch-up took %s for a fact", r.path)
		}
	}
	// Dropped (a merge of a segment that is not full): not a loss either.
	dropped := setPath(t, l, ab, day+"/0000"+segBlobExt, refs.ZeroHash)
	if _, err := l.diff(ab, dropped); errors.Is(err, errShrank) {
		t.Fatal("a dropped segment blob reads as lost facts")
	}
}

// Appends that fill segments keep the projection as a cold read of the
// same ledger builds it, and the catch-up over the append that writes a
// segment blob takes only the fact blobs.
func TestIncrementalEqualsColdWithSegmentBlobs(t *testing.T) {
	now := t0
	_, cs := network(t, 1, &now)
	c := cs[0]
	l := c.ledger(t)
	rng := rand.New(rand.NewSource(9))
	var trees []refs.Hash
	var fillReads int64
	for i := 0; i < 7; i++ {
		now = now.Add(time.Minute)
		objs := refs.StreamedBlobs.Load() + refs.ObjectsRead.Load()
		if _, err := l.Append(func(st *facts.State, at time.Time) ([]*facts.Fact, error) {
			var fs []*facts.Fact
			for j := 0; j < segMax/4; j++ {
				f := &facts.Fact{Kind: facts.KindNote, Tool: "a", Subject: fmt.Sprintf("n%d.%d", i, j)}
				if rng.Intn(3) == 0 {
					f = &facts.Fact{Kind: facts.KindClaim, Tool: "a", Scopes: []string{fmt.Sprintf("file:f%d", rng.Intn(500))}, LeaseS: 3600}
				}
				fs = append(fs, f)
			}
			return fs, nil
		}); err != nil {
			t.Fatal(err)
		}
		if i == 3 {
			fillReads = refs.StreamedBlobs.Load() + refs.ObjectsRead.Load() - objs
		}
		h, _ := l.Head()
		cm, _ := l.Store.ReadCommit(h)
		trees = append(trees, cm.Tree)
	}
	// The append that filled segment 0000 took the lines of its other
	// 192 facts from the mirror, not from their blobs.
	if fillReads > 8 {
		t.Fatalf("the append that filled a segment read %d objects", fillReads)
	}
	// The fourth append filled segment 0000: its diff is its 64 facts.
	added, err := l.diff(trees[2], trees[3])
	if err != nil || len(added) != segMax/4 {
		t.Fatalf("the diff of the append that filled a segment: %d blobs, %v", len(added), err)
	}
	for _, r := range added {
		if !strings.HasSuffix(r.path, ".json") {
			t.Fatalf("the diff took %s for a fact", r.path)
		}
	}
	if got := treePaths(t, c.common(), trees[6], segBlobExt); len(got) != 1 {
		t.Fatalf("segment blobs %v, want the one of 0000", got)
	}
	inc, err := l.Read()
	if err != nil {
		t.Fatal(err)
	}
	l2, cold, objs := coldRead(t, c.common(), now)
	if g, w := stateKey(t, cold), stateKey(t, inc); g != w {
		t.Fatalf("cold read with segment blobs differs from the incremental projection:\n got %s\nwant %s", g, w)
	}
	if objs > 2*segMax {
		t.Fatalf("the cold read asked %d objects for 448 facts, 256 of them in a full segment", objs)
	}
	if mi, ok := l.cache.mirrorBytes(inc); !ok {
		t.Fatal("no mirror")
	} else if mc, ok := l2.cache.mirrorBytes(cold); !ok || !bytes.Equal(mi, mc) {
		t.Fatal("the cold read's mirror differs from the appends'")
	}
}
