package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"

	"github.com/git-rally/git-rally/bench/ledgergen"
	"github.com/git-rally/git-rally/facts"
)

// runBuild appends a generated room's facts to the ledger of the
// repository at -dir, in this process, through facts.Ledger.Append.
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
	l, err := facts.Open(filepath.Join(*dir, ".git"), nil)
	if err != nil {
		return err
	}
	defer l.Close()
	st, err := ledgergen.Build(l, ledgergen.Options{Facts: *n, Seed: *seed, MaxBatch: *maxBatch, Tidy: *tidy,
		AutoPack: !*loose, End: time.Now().Add(-*end)})
	if err != nil {
		return err
	}
	fmt.Println(st)
	return nil
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
