package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/ledger"
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
	fl.Parse(args)
	end := time.Now().UTC().Add(*endIn).Truncate(time.Second)
	start := end.Add(-time.Duration(*n) * *gap)
	type ent struct{ path, raw string }
	ents := make([]ent, 0, *n)
	for i := 0; i < *n; i++ {
		at := start.Add(time.Duration(i) * *gap)
		agent := fmt.Sprintf("bench:agent%02d", i/10%20)
		f := &facts.Fact{V: 1, Tool: agent, At: facts.FormatTime(at), Clock: int64(i + 1)}
		switch i % 10 {
		case 0:
			f.Kind, f.Scopes, f.Access = facts.KindClaim, []string{fmt.Sprintf("file:src/p%d/f%d.go", i%97, i)}, facts.Exclusive
		case 1:
			f.Kind, f.Scopes = facts.KindRelease, []string{fmt.Sprintf("file:src/p%d/f%d.go", (i-1)%97, i-1)}
		default:
			f.Kind, f.Subject = facts.KindNote, fmt.Sprintf("working on step %d of task %d", i%7, i/300)
		}
		f.Seal()
		day := at
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
