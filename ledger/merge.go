package ledger

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// How a merge changed the local ledger.
const (
	MergeNone        = "none"         // the other side adds nothing
	MergeFastForward = "fast-forward" // the other side holds every local fact: adopt its commit
	MergeCommit      = "merge"        // a commit with two parents, ours first
)

// MergeOptions tune Merge.
type MergeOptions struct {
	// From names the other side in the merge commit's message.
	From string
	// EnsureAncestor writes a merge commit even when the other side adds
	// no fact, so that it becomes an ancestor of the local ledger and a
	// push of the local ledger fast-forwards the remote. Sync sets it
	// after a rejected push: the remote's commit held only facts we had,
	// but was not in our history.
	EnsureAncestor bool
}

// MergeResult reports a merge.
type MergeResult struct {
	Kind     string
	Old, New refs.Hash
	// NewFacts counts the facts the local ledger gained; OnlyOurs the
	// local facts the other side lacked.
	NewFacts, OnlyOurs int
	// Conflicts counts paths that differed on both sides and were kept as
	// ours. Fact files are named by their content id and never conflict;
	// only a hand-edited or foreign file can.
	Conflicts int
}

// Merge brings the facts of commit theirs into the local ledger: the union
// of the two trees by path. Fact files are named by content id, so the
// union never conflicts and never drops a fact. No history is walked: the
// union recurses only into subtrees whose ids differ, so its cost follows
// the divergence, not the ledger's size. If the union is theirs' tree the
// ledger fast-forwards to theirs; if it is ours nothing changes; otherwise
// a commit with parents (ours, theirs) is written. The ref is published
// with the same lock protocol as appends, so merges and appends serialise.
func (l *Ledger) Merge(theirs refs.Hash, o MergeOptions) (MergeResult, error) {
	if theirs.IsZero() {
		h, err := l.Head()
		return MergeResult{Kind: MergeNone, Old: h, New: h}, err
	}
	tc, err := l.Store.ReadCommit(theirs)
	if err != nil {
		return MergeResult{}, fmt.Errorf("reading the other ledger: %w", err)
	}
	if err := l.checkFormat(tc.Tree); err != nil {
		return MergeResult{}, err
	}
	if err := l.checkCanWrite(false); err != nil {
		return MergeResult{}, err
	}
	lock, err := l.Store.LockRef(LedgerRef)
	if err != nil {
		return MergeResult{}, err
	}
	defer lock.Unlock()
	ours := lock.Old
	res := MergeResult{Kind: MergeNone, Old: ours, New: ours}
	if ours == theirs {
		return res, nil
	}
	var oursTree refs.Hash
	if !ours.IsZero() {
		oc, err := l.Store.ReadCommit(ours)
		if err != nil {
			return res, fmt.Errorf("reading ledger head: %w", err)
		}
		oursTree = oc.Tree
	}
	var us unionStats
	u, err := l.union("", oursTree, tc.Tree, true, &us)
	if err != nil {
		return res, err
	}
	res.NewFacts, res.OnlyOurs, res.Conflicts = us.onlyB, us.onlyA, us.conflicts
	if us.conflicts > 0 {
		l.warn("merge: %d paths that are not facts differ between the two ledgers; kept the local version", us.conflicts)
	}
	switch {
	case u.hash == tc.Tree:
		res.Kind, res.New = MergeFastForward, theirs
	case u.hash == oursTree && !o.EnsureAncestor:
		return res, nil
	default:
		from := o.From
		if from == "" {
			from = theirs.String()[:12]
		}
		msg := fmt.Sprintf("merge %s (facts: %d new, %d local)", facts.OneLine(from, 120), res.NewFacts, res.OnlyOurs)
		c, err := l.Store.WriteCommit(refs.Commit{Tree: u.hash, Parents: []refs.Hash{ours, theirs},
			Message: msg + "\n", When: l.Now().UTC()})
		if err != nil {
			return res, err
		}
		res.Kind, res.New = MergeCommit, c
	}
	if err := lock.Commit(res.New); err != nil {
		return res, err
	}
	lock.Unlock()
	return res, l.Store.Ensure()
}

// checkFormat refuses a tree that is not a ledger this version reads.
func (l *Ledger) checkFormat(tree refs.Hash) error {
	es, err := l.readTree(tree)
	if err != nil {
		return err
	}
	for _, e := range es {
		if e.Name != FormatFile || e.Dir {
			continue
		}
		b, err := l.Store.ReadBlob(e.Hash)
		if err != nil {
			return err
		}
		if string(b) != FormatContent {
			return fmt.Errorf("the other ledger has format %q; this git-rally reads %q: upgrade git-rally",
				strings.TrimSpace(string(b)), strings.TrimSpace(FormatContent))
		}
		return nil
	}
	return fmt.Errorf("the other ledger has no %s file: it is not a rally ledger", FormatFile)
}

// Missing counts the facts of commit old that commit cur lacks (cur zero:
// all of them). Sync uses it to notice a remote whose history was
// rewritten. Like Merge it walks only where the trees differ.
func (l *Ledger) Missing(old, cur refs.Hash) (int, error) {
	if old.IsZero() || old == cur {
		return 0, nil
	}
	oc, err := l.Store.ReadCommit(old)
	if err != nil {
		return 0, err
	}
	var curTree refs.Hash
	if !cur.IsZero() {
		cc, err := l.Store.ReadCommit(cur)
		if err != nil {
			return 0, err
		}
		curTree = cc.Tree
	}
	var us unionStats
	if _, err := l.union("", oc.Tree, curTree, false, &us); err != nil {
		return 0, err
	}
	return us.onlyA, nil
}

type unionStats struct{ onlyA, onlyB, conflicts int }

// unionTree is a union's result: its id (zero when not written) and
// whether it equals either side.
type unionTree struct {
	hash     refs.Hash
	isA, isB bool
}

// union computes the tree holding every entry of a and of b. Where both
// have a name, equal ids are shared, two directories are merged, and
// anything else keeps a's entry (a conflict). With write false nothing is
// written; only the counts and the equalities are computed.
func (l *Ledger) union(prefix string, a, b refs.Hash, write bool, st *unionStats) (unionTree, error) {
	switch {
	case a == b:
		return unionTree{hash: a, isA: true, isB: true}, nil
	case b.IsZero():
		n, err := l.countFacts(prefix, a)
		st.onlyA += n
		return unionTree{hash: a, isA: true}, err
	case a.IsZero():
		n, err := l.countFacts(prefix, b)
		st.onlyB += n
		return unionTree{hash: b, isB: true}, err
	}
	ae, err := l.readTree(a)
	if err != nil {
		return unionTree{}, err
	}
	be, err := l.readTree(b)
	if err != nil {
		return unionTree{}, err
	}
	inB := make(map[string]refs.Entry, len(be))
	for _, e := range be {
		inB[e.Name] = e
	}
	// In a day tree, segment blobs are not merged by name: each is made
	// again from the merged segments (mergeSegmentBlobs).
	day := strings.HasPrefix(prefix, factsDir+"/") && strings.Count(prefix, "/") == 2
	isSegBlob := func(e refs.Entry) bool {
		_, ok := segmentOfBlob(e.Name)
		return day && ok && !e.Dir
	}
	isA, isB := true, true
	out := make([]refs.Entry, 0, len(ae)+len(be))
	seen := make(map[string]bool, len(ae))
	for _, e := range ae {
		if isSegBlob(e) {
			continue
		}
		seen[e.Name] = true
		p := joinPath(prefix, e.Name)
		other, ok := inB[e.Name]
		switch {
		case !ok:
			isB = false
			n, err := l.countEntry(p, e)
			if err != nil {
				return unionTree{}, err
			}
			st.onlyA += n
			out = append(out, e)
		case other.Hash == e.Hash && other.Dir == e.Dir:
			out = append(out, e)
		case other.Dir && e.Dir:
			sub, err := l.union(p, e.Hash, other.Hash, write, st)
			if err != nil {
				return unionTree{}, err
			}
			isA = isA && sub.isA
			isB = isB && sub.isB
			out = append(out, refs.Entry{Name: e.Name, Dir: true, Hash: sub.hash})
		default:
			st.conflicts++
			isB = false
			out = append(out, e)
		}
	}
	for _, e := range be {
		if seen[e.Name] || isSegBlob(e) {
			continue
		}
		isA = false
		n, err := l.countEntry(joinPath(prefix, e.Name), e)
		if err != nil {
			return unionTree{}, err
		}
		st.onlyB += n
		out = append(out, e)
	}
	if day {
		blobs, sameA, sameB, err := l.mergeSegmentBlobs(ae, be, out, write)
		if err != nil {
			return unionTree{}, err
		}
		out = append(out, blobs...)
		isA, isB = isA && sameA, isB && sameB
	}
	switch {
	case isA:
		return unionTree{hash: a, isA: true, isB: isB}, nil
	case isB:
		return unionTree{hash: b, isB: true}, nil
	case !write:
		return unionTree{}, nil
	}
	h, err := l.writeTree(out)
	return unionTree{hash: h}, err
}

func (l *Ledger) countEntry(p string, e refs.Entry) (int, error) {
	if e.Dir {
		return l.countFacts(p, e.Hash)
	}
	if isFactPath(p) {
		return 1, nil
	}
	return 0, nil
}

// countFacts counts the fact files under a tree.
func (l *Ledger) countFacts(prefix string, t refs.Hash) (int, error) {
	es, err := l.readTree(t)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range es {
		k, err := l.countEntry(joinPath(prefix, e.Name), e)
		if err != nil {
			return 0, err
		}
		n += k
	}
	return n, nil
}

// mergeSegmentBlobs returns the segment blobs of a merged day tree whose
// other entries are out, the two sides' entries being ae and be, and
// whether they are each side's. The result depends on the two sides, not
// on which is ours: a segment one side lacks keeps the other's blob; a
// segment both sides hold alike keeps the blob they agree on (or the one
// blob of the two, when only one side has it); a segment the merge
// changed, or whose two blobs differ, gets the segment blob made from
// the merged segment when it is full or closed (not the merged day's
// last segment), else none. A segment
// blob without its segment stays (both sides': the smaller id). With
// write false nothing is read or written, and a blob to make again
// counts as equal to neither side.
func (l *Ledger) mergeSegmentBlobs(ae, be, out []refs.Entry, write bool) (blobs []refs.Entry, sameA, sameB bool, err error) {
	side := func(es []refs.Entry) (dirs, sbs map[string]refs.Hash) {
		dirs, sbs = map[string]refs.Hash{}, map[string]refs.Hash{}
		for _, e := range es {
			if seg, ok := segmentOfBlob(e.Name); ok && !e.Dir {
				sbs[seg] = e.Hash
			} else if e.Dir {
				dirs[e.Name] = e.Hash
			}
		}
		return dirs, sbs
	}
	da, ja := side(ae)
	db, jb := side(be)
	sameA, sameB = true, true
	done := map[string]bool{}
	// The merged day's last segment is the one appends go on writing;
	// every other is closed, and gets a segment blob however full.
	last, lastNum := "", -1
	for _, e := range out {
		if n, ok := segmentNumber(e.Name); ok && e.Dir && (n > lastNum || n == lastNum && e.Name > last) {
			last, lastNum = e.Name, n
		}
	}
	for _, e := range out {
		if !e.Dir {
			continue
		}
		ha, okA := da[e.Name]
		hb, okB := db[e.Name]
		xa, xb := ja[e.Name], jb[e.Name]
		if !okA && !okB || xa.IsZero() && xb.IsZero() && okA && okB && ha == hb {
			continue
		}
		done[e.Name] = true
		var want refs.Hash
		remake := false
		switch {
		case okA && okB && ha == hb:
			switch {
			case xa == xb || xb.IsZero():
				want = xa
			case xa.IsZero():
				want = xb
			default:
				remake = true
			}
		case okA && okB:
			remake = true
		case okA:
			want = xa
		default:
			want = xb
		}
		if remake {
			if !write {
				sameA, sameB = false, false
				continue
			}
			es, err := l.readTree(e.Hash)
			if err != nil {
				return nil, false, false, err
			}
			if len(es) >= segMax || e.Name != last {
				if data, ok := l.segmentBlobOf(es, nil); ok {
					if want, err = l.Store.WriteBlob(data); err != nil {
						return nil, false, false, err
					}
				}
			}
		}
		if !want.IsZero() {
			blobs = append(blobs, refs.Entry{Name: e.Name + segBlobExt, Hash: want})
		}
		sameA = sameA && want == xa
		sameB = sameB && want == xb
	}
	// Segment blobs without a segment on either side.
	for _, seg := range segNames(ja, jb) {
		if done[seg] {
			continue
		}
		if _, ok := da[seg]; ok {
			continue
		}
		if _, ok := db[seg]; ok {
			continue
		}
		xa, xb := ja[seg], jb[seg]
		want := xa
		if want.IsZero() || !xb.IsZero() && bytes.Compare(xb[:], xa[:]) < 0 {
			want = xb
		}
		blobs = append(blobs, refs.Entry{Name: seg + segBlobExt, Hash: want})
		sameA = sameA && want == xa
		sameB = sameB && want == xb
	}
	return blobs, sameA, sameB, nil
}

func segNames(ms ...map[string]refs.Hash) []string {
	var out []string
	for _, m := range ms {
		for k := range m {
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	slices.Sort(out)
	return out
}
