package ledger

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// genLedger writes n random facts (claims, renewals, releases, handoffs
// and their answers, retractions by the author and by others, risks,
// leaves), some of them dated in the future, some stored twice, and
// corrupt ones (forged content under an id, a line that is no JSON, a
// blob under another fact's name), in commits of about 60 facts spread
// over days. It returns the head's tree and the good facts written.
func genLedger(t *testing.T, l *Ledger, rng *rand.Rand, n int, now time.Time) (refs.Hash, []*facts.Fact) {
	t.Helper()
	tools := []string{"a", "b", "c", "d"}
	scopes := []string{"file:x", "file:y", "dir:d", "file:d/e", "port:80"}
	var all []*facts.Fact
	var tree, head refs.Hash
	clock := int64(0)
	when := now.Add(-2 * time.Duration(n) * time.Minute)
	for len(all) < n {
		when = when.Add(time.Duration(30+rng.Intn(60)) * time.Minute)
		var batch []*facts.Fact
		for j := 0; j < 40+rng.Intn(40) && len(all)+len(batch) < n; j++ {
			clock += int64(1 + rng.Intn(2))
			tool := tools[rng.Intn(len(tools))]
			done := append(append([]*facts.Fact(nil), all...), batch...)
			var f facts.Fact
			switch rng.Intn(10) {
			case 0:
				f = facts.Fact{Kind: facts.KindPresence, Tool: tool, Subject: "here"}
			case 1, 2:
				f = facts.Fact{Kind: facts.KindClaim, Tool: tool, Scopes: []string{scopes[rng.Intn(len(scopes))]}, LeaseS: 1800, Access: facts.Exclusive}
				if rng.Intn(2) == 0 {
					f.Ref = pick(rng, done, facts.KindClaim)
				}
			case 3:
				f = facts.Fact{Kind: facts.KindRelease, Tool: tool, Ref: pick(rng, done, facts.KindClaim)}
			case 4:
				f = facts.Fact{Kind: facts.KindHandoff, Tool: tool, Target: tools[rng.Intn(len(tools))], Subject: "h"}
			case 5:
				f = facts.Fact{Kind: []string{facts.KindReceipt, facts.KindResolve, facts.KindArtifact}[rng.Intn(3)], Tool: tool, Ref: pick(rng, done, facts.KindHandoff)}
			case 6:
				ref := pick(rng, done, "")
				f = facts.Fact{Kind: facts.KindRetract, Tool: tool, Ref: ref}
				if rng.Intn(3) > 0 && ref != "" {
					f.Tool = authorOf(done, ref)
				}
			case 7:
				f = facts.Fact{Kind: facts.KindLeave, Tool: tool}
			case 8:
				f = facts.Fact{Kind: facts.KindRisk, Tool: tool, Subject: "r"}
			default:
				f = facts.Fact{Kind: facts.KindNote, Tool: tool, Subject: "n", Body: "line one\nline \"two\""}
			}
			f.V, f.Clock, f.At = 1, clock, facts.FormatTime(when.Add(time.Duration(j)*time.Second))
			if rng.Intn(40) == 0 {
				f.At = facts.FormatTime(now.Add(time.Duration(1+rng.Intn(3)) * time.Hour)) // dated in the future
			}
			f.Seal()
			batch = append(batch, &f)
		}
		all = append(all, batch...)
		stored := append([]*facts.Fact(nil), batch...)
		if rng.Intn(4) == 0 && len(all) > len(batch) {
			stored = append(stored, all[rng.Intn(len(all)-len(batch))]) // stored twice, on another day
		}
		if rng.Intn(3) == 0 {
			forged := *batch[0]
			forged.Raw = bytes.Replace(forged.Encode(), []byte(`"kind":"`), []byte(`"kind":"x`), 1)
			forged.ID = "f_" + fmt.Sprintf("%016x", rng.Uint64())
			junk := &facts.Fact{ID: fmt.Sprintf("f_%016x", rng.Uint64()), Raw: []byte("not json\n")}
			misnamed := *batch[len(batch)-1]
			misnamed.ID = fmt.Sprintf("f_%016x", rng.Uint64())
			stored = append(stored, &forged, junk, &misnamed)
		}
		var err error
		if tree, err = l.addFacts(tree, when, stored); err != nil {
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
	lock, err := l.Store.LockRef(LedgerRef)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()
	if err := lock.Commit(head); err != nil {
		t.Fatal(err)
	}
	return tree, all
}

// rebuildLedger opens a ledger in a fresh repository, its clock fixed at
// now, with no tracking refs; it is closed when the test ends.
func rebuildLedger(t *testing.T) (common string, l *Ledger, now time.Time) {
	t.Helper()
	dir := gitSandbox(t)
	git(t, dir, "init", "-q", ".")
	common = filepath.Join(dir, ".git")
	now = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	l, err := Open(common, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	l.NoTracking = true
	return common, l, now
}

// oldRebuild is the rebuild as it was before it streamed: every fact
// decoded and held, then projected at once.
func oldRebuild(t *testing.T, common string, now time.Time, tree refs.Hash) (*facts.State, []*facts.Fact, []string) {
	t.Helper()
	l, err := Open(common, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	all, err := l.readAll(tree)
	if err != nil {
		t.Fatal(err)
	}
	all = dedupe(all)
	return facts.BuildAt(all, l.horizon()), all, l.Warnings
}

// A cold rebuild streams the facts through the projection; it computes
// exactly what holding all of them computed: the same state, warnings and
// mirror, through git cat-file (many blobs) and one by one (few), and
// again when a fact held back as future-dated comes due and when a fact
// arrives out of order.
func TestStreamedRebuildEqualsOld(t *testing.T) {
	for _, n := range []int{300, 1500} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			common, l, now := rebuildLedger(t)
			tree, written := genLedger(t, l, rand.New(rand.NewSource(int64(n))), n, now)
			check := func(what string, st *facts.State, l *Ledger) {
				t.Helper()
				want, all, warns := oldRebuild(t, common, now, tree)
				if len(all) == 0 || len(all) > len(written) {
					t.Fatalf("%s: %d facts read back of %d written", what, len(all), len(written))
				}
				want.Head, want.Tree = st.Head, st.Tree
				// Compared by what they hold: a projection replayed from a
				// checkpoint holds its handoffs still encoded.
				if g, w := stateKey(t, st), stateKey(t, want); g != w || st.Damaged != want.Damaged {
					t.Fatalf("%s: streamed projection differs:\n got %s\nwant %s", what, g, w)
				}
				if what == "cold" && !reflect.DeepEqual(l.Warnings, warns) {
					t.Fatalf("%s: warnings\n got %q\nwant %q", what, l.Warnings, warns)
				}
				var mirror []byte
				for _, f := range sortedCopy(all) {
					mirror = append(mirror, f.Raw...)
				}
				if got, ok := l.cache.mirrorBytes(st); !ok || !bytes.Equal(got, mirror) {
					t.Fatalf("%s: mirror differs (%v): %d bytes, want %d", what, ok, len(got), len(mirror))
				}
				// The index written with it answers as the facts do.
				var claims []*facts.Fact
				for _, f := range sortedCopy(all) {
					if f.Kind == facts.KindClaim && f.Tool == "b" {
						claims = append(claims, f)
					}
				}
				got, ok := l.cache.indexTail(st, 5, facts.KindClaim, "b")
				if len(claims) > 5 {
					claims = claims[len(claims)-5:]
				}
				if !ok || len(got) != len(claims) {
					t.Fatalf("%s: the index gives %d claims by b (%v), want %d", what, len(got), ok, len(claims))
				}
				for i := range got {
					if got[i].ID != claims[i].ID {
						t.Fatalf("%s: claim %d from the index is %s, want %s", what, i, got[i].ID, claims[i].ID)
					}
				}
			}
			cold := func() (*Ledger, *facts.State) {
				t.Helper()
				os.RemoveAll(filepath.Join(common, "rally", "cache"))
				l, err := Open(common, func() time.Time { return now })
				if err != nil {
					t.Fatal(err)
				}
				l.NoTracking = true
				st, err := l.Read()
				if err != nil {
					t.Fatal(err)
				}
				return l, st
			}
			l1, st := cold()
			defer l1.Close()
			if st.Held == 0 || len(l1.Warnings) == 0 {
				t.Fatalf("the ledger has %d future facts and %d warnings: generate some", st.Held, len(l1.Warnings))
			}
			check("cold", st, l1)
			if got := len(l1.cache.headPath(st.Tree)); got != 5 {
				t.Fatalf("the rebuild kept %d trees of the newest path, want 5 (root, facts, month, day, segment)", got)
			}

			// The future facts come due: the projection is built again
			// from the mirror.
			now = now.Add(4 * time.Hour)
			l2, err := Open(common, func() time.Time { return now })
			if err != nil {
				t.Fatal(err)
			}
			defer l2.Close()
			l2.NoTracking = true
			st2, err := l2.Read()
			if err != nil {
				t.Fatal(err)
			}
			if st2.Held != 0 {
				t.Fatalf("%d facts still held back", st2.Held)
			}
			check("future due", st2, l2)

			// A fact that sorts before the newest one (a merge brings
			// such facts): rebuilt from the mirror plus the new facts.
			early := &facts.Fact{V: 1, Kind: facts.KindRelease, Tool: written[0].Tool, Session: written[0].Session, Ref: written[0].ID, Clock: 1, At: written[0].At}
			early.Seal()
			written = append(written, early)
			if tree, err = l2.addFacts(tree, now, []*facts.Fact{early}); err != nil {
				t.Fatal(err)
			}
			old, _ := l2.Head()
			c, err := l2.Store.WriteCommit(refs.Commit{Tree: tree, Parents: []refs.Hash{old}, Message: "early\n", When: now})
			if err != nil {
				t.Fatal(err)
			}
			lock, err := l2.Store.LockRef(LedgerRef)
			if err != nil {
				t.Fatal(err)
			}
			if err := lock.Commit(c); err != nil {
				t.Fatal(err)
			}
			lock.Unlock()
			l3, err := Open(common, func() time.Time { return now })
			if err != nil {
				t.Fatal(err)
			}
			defer l3.Close()
			l3.NoTracking = true
			st3, err := l3.Read()
			if err != nil {
				t.Fatal(err)
			}
			check("out of order", st3, l3)
			l4, st4 := cold()
			defer l4.Close()
			check("cold again", st4, l4)
		})
	}
}

// A cold rebuild reads the trees once and each fact blob once: one
// cat-file for the trees, one per core (at most 4) for the blobs, every
// blob under facts/ streamed exactly once (a segment with a segment
// blob, closed when its day ended, as that blob alone), whatever the
// ledger's size.
func TestColdRebuildReadsEachBlobOnce(t *testing.T) {
	common, l, now := rebuildLedger(t)
	genLedger(t, l, rand.New(rand.NewSource(7)), 1500, now)
	head, _ := l.Head()
	paths := strings.Split(git(t, filepath.Dir(common), "ls-tree", "-r", "--name-only", head.String(), "facts"), "\n")
	sealed := map[string]bool{}
	for _, line := range paths {
		if seg, ok := strings.CutSuffix(line, segBlobExt); ok {
			sealed[seg] = true
		}
	}
	blobs := len(sealed)
	for _, line := range paths {
		if strings.HasSuffix(line, ".json") && !sealed[filepath.Dir(line)] {
			blobs++
		}
	}
	if len(sealed) == 0 {
		t.Fatal("no segment blob: generate days that end")
	}
	os.RemoveAll(filepath.Join(common, "rally", "cache"))
	l2, err := Open(common, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	l2.NoTracking = true
	gits, streamed := refs.GitCount, refs.StreamedBlobs.Load()
	if _, err := l2.Read(); err != nil {
		t.Fatal(err)
	}
	gits, streamed = refs.GitCount-gits, refs.StreamedBlobs.Load()-streamed
	if streamed != int64(blobs) {
		t.Fatalf("the rebuild streamed %d blobs, the tree holds %d fact and segment blobs to read", streamed, blobs)
	}
	if want := 1 + min(runtime.GOMAXPROCS(0), 4); gits < 2 || gits > want {
		t.Fatalf("the rebuild ran %d git processes, want one cat-file for the trees and 1 to %d for the blobs", gits, want-1)
	}
}

// The rebuild's first pass (blobScanner, one Fact reused, strings over
// the blob) keeps of each blob exactly what parseBlobRaw gives: the same
// facts, lines, clocks and retractions, the same warnings, whatever the
// blobs scanned before with the same scanner held.
func TestBlobScannerMatchesParseBlob(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	words := []string{"a", "src/x.go", "ünï", "\"q\"", "line\nbreak", "\u202e", "\x01", "日本"}
	pick := func() string { return words[rng.Intn(len(words))] }
	tools := []string{"a", "codex:x1", "claude_code:impl-1"} // most tools valid, so most facts are kept
	pickTool := func() string {
		if rng.Intn(4) == 0 {
			return pick()
		}
		return tools[rng.Intn(len(tools))]
	}
	var sc blobScanner
	kept := 0
	for i := 0; i < 400; i++ {
		var data []byte
		name := ""
		for k := 0; k < 1+rng.Intn(3); k++ {
			f := &facts.Fact{V: 1, Kind: facts.Kinds[rng.Intn(len(facts.Kinds))], Tool: pickTool(), At: "2026-01-01T00:00:00.000Z",
				Clock: rng.Int63n(40) - 2, Ref: pick(), Subject: pick(), Body: pick()}
			if rng.Intn(2) == 0 {
				f.Scopes = []string{"file:" + pick()}
			}
			if rng.Intn(4) == 0 {
				f.Kind, f.Ref = facts.KindRetract, fmt.Sprintf("f_%016x", rng.Uint64())
			}
			f.Seal()
			line := f.Raw
			switch rng.Intn(8) {
			case 0:
				line = bytes.Replace(line, []byte(`"kind":"`), []byte(`"kind": "`), 1) // not canonical
			case 1:
				line = bytes.Replace(line, []byte(`"tool":"`), []byte(`"tool":"x`), 1) // forged
			case 2:
				line = []byte("not json\n")
			case 3:
				line = append([]byte("\n  \n"), line...)
			}
			data = append(data, line...)
			if name == "" || rng.Intn(2) == 0 {
				name = f.ID + ".json"
			}
		}
		if rng.Intn(3) == 0 {
			data = bytes.TrimSuffix(data, []byte("\n"))
		}
		if rng.Intn(8) == 0 {
			name = strings.ToUpper(name) // a name that is no id: kept as it is
		}
		path := "facts/2026-01/01/0000/" + name
		want, wwarn := parseBlobRaw(path, data, true)
		fl := &factList{}
		fl.add("facts/2026-01/01/0000", []byte(name), refs.Hash{})
		got, gwarn := sc.scan(fl, 0, append([]byte(nil), data...))
		if !reflect.DeepEqual(gwarn, wwarn) {
			t.Fatalf("blob %d: warnings\n got %q\nwant %q", i, gwarn, wwarn)
		}
		if len(got) != len(want) {
			t.Fatalf("blob %d: %d facts kept, want %d", i, len(got), len(want))
		}
		for j, f := range want {
			g := got[j]
			id, ok := parseFactID(f.ID)
			if g.clock != f.Clock || g.id != id || g.idOK != ok || !bytes.Equal(g.raw, f.Raw) {
				t.Fatalf("blob %d fact %d: got clock %d id %x %v %q, want %d %x %v %q", i, j, g.clock, g.id, g.idOK, g.raw, f.Clock, id, ok, f.Raw)
			}
			var r *retractRef
			if f.Kind == facts.KindRetract && f.Ref != "" {
				r = &retractRef{id: f.ID, ref: f.Ref, tool: f.Tool}
			}
			if !reflect.DeepEqual(g.retract, r) {
				t.Fatalf("blob %d fact %d: retraction %+v, want %+v", i, j, g.retract, r)
			}
			kept++
		}
	}
	if kept < 100 {
		t.Fatalf("only %d facts kept: generate more good ones", kept)
	}
}

// The same with the arena's chunks small and written to disk from the
// first: the lines read back give the same projections and mirrors.
func TestSpilledRebuildEqualsOld(t *testing.T) {
	defer func(c, a int) { arenaChunk, spillAfter = c, a }(arenaChunk, spillAfter)
	if testing.Short() {
		t.Skip("runs the rebuild tests again")
	}
	arenaChunk, spillAfter = 4096, 0
	before, read := chunksSpilled.Load(), chunksRead.Load()
	TestStreamedRebuildEqualsOld(t)
	TestMergeDecodesTailNotHistory(t)
	if chunksSpilled.Load() == before {
		t.Fatal("no chunk was written to disk")
	}
	t.Logf("%d chunks spilled, %d read back", chunksSpilled.Load()-before, chunksRead.Load()-read)
}
