package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/git-rally/git-rally/bench/ledgergen"
	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/ledger"
	"github.com/git-rally/git-rally/refs"
)

// runBuild appends a generated room's facts to the ledger of the
// repository at -dir, in this process, through ledger.Ledger.Append.
func runBuild(args []string) error {
	fl := flag.NewFlagSet("build", flag.ExitOnError)
	dir := fl.String("dir", "", "repository (its .git is the common dir)")
	n := fl.Int("facts", 1000, "facts to append")
	seed := fl.Int64("seed", 1, "random seed")
	maxBatch := fl.Int("max-batch", 100, "most facts per commit (≤200)")
	end := fl.Duration("end-ago", 10*time.Minute, "the last fact is this long before now")
	tidy := fl.Bool("tidy", false, "a tidy room: every handoff resolved, no new sessions (the projection does not grow)")
	loose := fl.Bool("loose", false, "leave every object loose (rally packs them in the background past 4096 loose objects)")
	prof := fl.String("cpuprofile", "", "write a CPU profile of the build here")
	open := fl.Int("open-claims", -1, "then release or add claims until exactly this many are open (-1: leave them)")
	fill := fl.Int("head-fill", -1, "then append notes until the segment an append made now goes into holds this many facts (-1: leave it)")
	fl.Parse(args)
	if *dir == "" {
		return fmt.Errorf("build needs -dir")
	}
	if *prof != "" {
		pf, err := os.Create(*prof)
		if err != nil {
			return err
		}
		pprof.StartCPUProfile(pf)
		defer pprof.StopCPUProfile()
	}
	l, err := ledger.Open(filepath.Join(*dir, ".git"), nil)
	if err != nil {
		return err
	}
	defer l.Close()
	var said []string
	if *n > 0 {
		st, err := ledgergen.Build(l, ledgergen.Options{Facts: *n, Seed: *seed, MaxBatch: *maxBatch, Tidy: *tidy,
			AutoPack: !*loose, End: time.Now().Add(-*end)})
		if err != nil {
			return err
		}
		said = append(said, st.String())
	}
	if *open >= 0 {
		added, err := ledgergen.SetOpenClaims(l, *open, *maxBatch)
		if err != nil {
			return err
		}
		if !*loose && l.Store.LooseEstimate() > 0 {
			if err := l.Store.Pack(); err != nil {
				return err
			}
		}
		said = append(said, fmt.Sprintf("%d facts to leave %d claims open", added, *open))
	}
	if *fill >= 0 {
		added, err := fillHeadSegment(l, *fill)
		if err != nil {
			return err
		}
		said = append(said, fmt.Sprintf("%d notes to fill the head segment to %d facts", added, *fill))
	}
	fmt.Println(strings.Join(said, "; then "))
	return nil
}

// fillHeadSegment appends notes, one per commit, until the segment the
// next append at now writes into holds want facts. An append rewrites that
// segment's tree (up to 256 entries, 13 KB), so its cost follows the
// segment's fill; a scenario that appends again and again to one fixed
// head (gc) would otherwise compare fill levels, not ledger sizes.
func fillHeadSegment(l *ledger.Ledger, want int) (int, error) {
	for added := 0; ; added++ {
		n, err := headSegmentFill(l, time.Now())
		if err != nil {
			return added, err
		}
		if n == want {
			return added, nil
		}
		if added > 1000 {
			return added, fmt.Errorf("the head segment holds %d facts after %d notes, want %d", n, added, want)
		}
		if _, err := l.Append(facts.Simple(&facts.Fact{Kind: facts.KindNote, Tool: "bench:fill", Subject: "fill"})); err != nil {
			return added, err
		}
	}
}

// headSegmentFill counts the facts in the newest segment of now's day.
func headSegmentFill(l *ledger.Ledger, now time.Time) (int, error) {
	head, err := l.Head()
	if err != nil || head.IsZero() {
		return 0, err
	}
	c, err := l.Store.ReadCommit(head)
	if err != nil {
		return 0, err
	}
	tree := c.Tree
	for _, d := range ledger.LayoutDirs(now) {
		es, err := l.Store.ReadTree(tree)
		if err != nil {
			return 0, err
		}
		tree = refs.ZeroHash
		for _, e := range es {
			if e.Dir && e.Name == d {
				tree = e.Hash
			}
		}
		if tree.IsZero() {
			return 0, nil
		}
	}
	es, err := l.Store.ReadTree(tree) // the day: segments 0000, 0001, ... and the full ones' segment blobs
	if err != nil {
		return 0, err
	}
	var newest *refs.Entry
	for i, e := range es {
		if e.Dir && (newest == nil || e.Name > newest.Name) {
			newest = &es[i]
		}
	}
	if newest == nil {
		return 0, nil
	}
	seg, err := l.Store.ReadTree(newest.Hash)
	return len(seg), err
}

// runHistory writes a git fast-import stream: one branch of -commits
// commits, each changing -files files of -blob-size random bytes spread
// over 128 directories, so the pack is large (random data does not
// compress or delta) and holds many objects.
func runHistory(args []string) error {
	fl := flag.NewFlagSet("history", flag.ExitOnError)
	commits := fl.Int("commits", 20000, "commits")
	files := fl.Int("files", 10, "files changed per commit")
	size := fl.Int("blob-size", 512, "bytes per blob")
	fl.Parse(args)
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer w.Flush()
	rng := rand.New(rand.NewSource(7))
	buf := make([]byte, *size)
	t0 := time.Date(2020, 1, 1, 9, 0, 0, 0, time.UTC).Unix()
	mark := 0
	for c := 0; c < *commits; c++ {
		blobMarks := make([]int, *files)
		for i := range blobMarks {
			rng.Read(buf)
			mark++
			blobMarks[i] = mark
			fmt.Fprintf(w, "blob\nmark :%d\ndata %d\n", mark, len(buf))
			w.Write(buf)
			w.WriteByte('\n')
		}
		ts := t0 + int64(c)*600
		msg := fmt.Sprintf("change %d", c)
		fmt.Fprintf(w, "commit refs/heads/main\ncommitter Dev <dev@example.com> %d +0000\ndata %d\n%s\n", ts, len(msg), msg)
		for i, m := range blobMarks {
			d := rng.Intn(128)
			fmt.Fprintf(w, "M 100644 :%d src/d%03d/f%02d_%d.bin\n", m, d, rng.Intn(40), i%2)
		}
		w.WriteByte('\n')
	}
	return nil
}
