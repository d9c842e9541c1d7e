package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/ledger"
	"github.com/git-rally/git-rally/refs"
)

// runBulk writes a git fast-import stream of one commit on
// refs/rally/ledger holding -facts facts in rally's layout
// (facts/YYYY-MM/DD/NNNN/<id>.json, segments of 256): the shape of a large
// ledger received whole, built in seconds where appends take minutes. The
// facts are notes, claims and releases by 20 agents, a fact every -gap;
// with -one-day every fact goes under the commit's day, as one append of
// them all would put them.
func runBulk(args []string) error {
	fl := flag.NewFlagSet("bulk", flag.ExitOnError)
	n := fl.Int("facts", 100000, "facts in the commit")
	gap := fl.Duration("gap", 10*time.Second, "time between two facts")
	oneDay := fl.Bool("one-day", false, "put every fact under the last fact's day")
	endIn := fl.Duration("end-in", -time.Hour, "the last fact's time from now (positive: dated in the future)")
	commits := fl.Bool("commits", false, "one commit per fact, as rally's appends write them (an init commit first)")
	fl.Parse(args)
	end := time.Now().UTC().Add(*endIn).Truncate(time.Second)
	if *commits {
		w := bufio.NewWriterSize(os.Stdout, 1<<20)
		if err := writeCommits(w, *n, end, *gap); err != nil {
			return err
		}
		return w.Flush()
	}
	start := end.Add(-time.Duration(*n) * *gap)
	type ent struct{ path, raw string }
	ents := make([]ent, 0, *n)
	for i := 0; i < *n; i++ {
		f := bulkFact(i, start, *gap)
		day := f.Time()
		if *oneDay {
			day = end
		}
		ents = append(ents, ent{day.Format("2006-01/02"), string(f.Raw)})
	}
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer w.Flush()
	// Blobs first, marked; then one commit listing them by path.
	paths := make([]string, len(ents))
	seg := map[string]int{}
	for i, e := range ents {
		fmt.Fprintf(w, "blob\nmark :%d\ndata %d\n%s\n", i+1, len(e.raw), e.raw)
		k := seg[e.path]
		seg[e.path] = k + 1
		f, _ := facts.Parse([]byte(e.raw[:len(e.raw)-1]))
		paths[i] = fmt.Sprintf("facts/%s/%04d/%s.json", e.path, k/256, f.ID)
	}
	fmt.Fprintf(w, "blob\nmark :%d\ndata %d\n%s\n", len(ents)+1, len(ledger.FormatContent), ledger.FormatContent)
	// Each closed segment's segment blob (every segment but the newest,
	// which appends go on writing), as the append that closes it writes
	// it (ledger.SealBlob).
	type segment struct {
		names    []string
		contents [][]byte
	}
	segs := map[string]*segment{}
	var segOrder []string
	for i, e := range ents {
		dir, name := path.Split(paths[i])
		sg := segs[dir]
		if sg == nil {
			sg = &segment{}
			segs[dir] = sg
			segOrder = append(segOrder, dir)
		}
		sg.names = append(sg.names, name)
		sg.contents = append(sg.contents, []byte(e.raw))
	}
	var segPaths []string
	var segMarks []int
	for k, dir := range segOrder {
		sg := segs[dir]
		data, ok := ledger.SealBlob(sg.names, sg.contents)
		if k == len(segOrder)-1 && len(sg.names) < 256 || !ok {
			continue
		}
		mark := len(ents) + 2 + len(segPaths)
		fmt.Fprintf(w, "blob\nmark :%d\ndata %d\n%s\n", mark, len(data), data)
		segPaths = append(segPaths, strings.TrimSuffix(dir, "/")+".jsonl")
		segMarks = append(segMarks, mark)
	}
	msg := fmt.Sprintf("%d facts\n", len(ents))
	fmt.Fprintf(w, "commit %s\ncommitter bench <bench@example.com> %d +0000\ndata %d\n%s", "refs/rally/ledger", end.Unix(), len(msg), msg)
	fmt.Fprintf(w, "M 100644 :%d %s\n", len(ents)+1, ledger.FormatFile)
	idx := make([]int, len(ents))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return paths[idx[a]] < paths[idx[b]] })
	for _, i := range idx {
		fmt.Fprintf(w, "M 100644 :%d %s\n", i+1, paths[i])
	}
	for k, p := range segPaths {
		fmt.Fprintf(w, "M 100644 :%d %s\n", segMarks[k], p)
	}
	fmt.Fprintln(w)
	return nil
}

// bulkFact is the generator's fact i, sealed: notes, claims and releases
// by 20 agents, one every gap from start, clock i+1.
func bulkFact(i int, start time.Time, gap time.Duration) *facts.Fact {
	f := bulkFields(i, start, gap)
	f.V, f.Clock = 1, int64(i+1)
	f.Seal()
	return f
}

// bulkFields is fact i as a rule hands it to an append: what the append
// adds (version, clock, id) not set yet.
func bulkFields(i int, start time.Time, gap time.Duration) *facts.Fact {
	at := start.Add(time.Duration(i) * gap)
	agent := fmt.Sprintf("bench:agent%02d", i/10%20)
	f := &facts.Fact{Tool: agent, At: facts.FormatTime(at)}
	switch i % 10 {
	case 0:
		f.Kind, f.Scopes, f.Access = facts.KindClaim, []string{fmt.Sprintf("file:src/p%d/f%d.go", i%97, i)}, facts.Exclusive
	case 1:
		f.Kind, f.Scopes = facts.KindRelease, []string{fmt.Sprintf("file:src/p%d/f%d.go", (i-1)%97, i-1)}
	default:
		f.Kind, f.Subject = facts.KindNote, fmt.Sprintf("working on step %d of task %d", i%7, i/300)
	}
	return f
}

// writeCommits writes a fast-import stream of n facts on
// refs/rally/ledger as rally's appends write them: an init commit (the
// format file only), then one commit per fact, dated at the fact's time
// (author and committer refs.Signature, the message ledger's), its blob
// in the newest segment of its day, a new segment after segMax (256)
// entries, the append that fills a segment writing its segment blob
// beside it, and the first append of a day that of the day before's last
// segment (ledger.SealBlob). fast-import makes the trees; TestCommitsAsAppended holds
// them to those of real appends, commit ids and all. What it keeps is
// the current segment's lines: the stream of a million commits is
// written in constant memory.
func writeCommits(w io.Writer, n int, end time.Time, gap time.Duration) error {
	start := end.Add(-time.Duration(n) * gap)
	who := refs.Signature.Name + " <" + refs.Signature.Email + ">"
	commit := func(when time.Time, msg string) {
		t := fmt.Sprintf("%d +0000", when.Unix())
		fmt.Fprintf(w, "commit %s\nauthor %s %s\ncommitter %s %s\ndata %d\n%s", ledger.LedgerRef, who, t, who, t, len(msg), msg)
	}
	inline := func(path string, data []byte) {
		fmt.Fprintf(w, "M 100644 inline %s\ndata %d\n%s\n", path, len(data), data)
	}
	// rally init, a gap before the first fact.
	commit(start.Add(-gap), "init rally ledger\n")
	inline(ledger.FormatFile, []byte(ledger.FormatContent))
	w.Write([]byte("\n"))
	var day string
	seg := 0
	var names []string
	var lines [][]byte
	for i := 0; i < n; i++ {
		f := bulkFact(i, start, gap)
		at := f.Time()
		var sealed string
		var sealData []byte
		if d := strings.Join(ledger.LayoutDirs(at), "/"); d != day {
			// A new day closes the last segment of the day before: its
			// segment blob goes in with this commit.
			if data, ok := ledger.SealBlob(names, lines); ok && day != "" && len(names) < 256 {
				sealed, sealData = fmt.Sprintf("%s/%04d.jsonl", day, seg), data
			}
			day, seg, names, lines = d, 0, names[:0], lines[:0]
		} else if len(names) == 256 {
			seg, names, lines = seg+1, names[:0], lines[:0]
		}
		commit(at, facts.CutWords(f.Summary(), 197)+"\n")
		if sealed != "" {
			inline(sealed, sealData)
		}
		segDir := fmt.Sprintf("%s/%04d", day, seg)
		inline(segDir+"/"+f.ID+".json", f.Raw)
		names = append(names, f.ID+".json")
		lines = append(lines, f.Raw)
		if data, ok := ledger.SegmentBlob(names, lines); ok && len(names) == 256 {
			inline(segDir+".jsonl", data)
		}
		if _, err := w.Write([]byte("\n")); err != nil {
			return err
		}
	}
	return nil
}
