package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"time"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/ledger"
)

// runProfile makes -n in-process appends (open, claim, close) and, with
// -room, -n warm reads, on the repository at -dir, optionally under the CPU
// profiler, and prints the median. It is how the causes in the report
// were found: `rallybench profile -dir R -n 300 -cpuprofile cpu.out`.
func runProfile(args []string) error {
	fl := flag.NewFlagSet("profile", flag.ExitOnError)
	dir := fl.String("dir", "", "repository")
	n := fl.Int("n", 200, "operations")
	read := fl.Bool("read", false, "profile warm reads (Open+Read+Close) instead of appends")
	prof := fl.String("cpuprofile", "", "write a CPU profile here")
	reset := fl.Bool("reset-packed", false, "before every append, move the ledger back to its head at start and restore the cache (see measure)")
	cold := fl.Bool("cold", false, "with -read: delete the cache before every read (the cold read)")
	memprof := fl.String("memprofile", "", "write a heap profile (every allocation sampled) here at the end")
	fl.Parse(args)
	if *memprof != "" {
		runtime.MemProfileRate = 4096
		defer func() {
			if f, err := os.Create(*memprof); err == nil {
				pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
		}()
	}
	common := filepath.Join(*dir, ".git")
	m := &measurer{dir: *dir, common: common, reset: *reset}
	if *reset {
		h, err := m.head()
		if err != nil {
			return err
		}
		m.packedHead = h
		if m.savedState, err = os.ReadFile(filepath.Join(common, "rally", "cache", "state.bin")); err != nil {
			return err
		}
	}
	if *prof != "" {
		pf, err := os.Create(*prof)
		if err != nil {
			return err
		}
		pprof.StartCPUProfile(pf)
		defer pprof.StopCPUProfile()
	}
	ds := make([]time.Duration, 0, *n)
	stamp := time.Now().UnixNano()
	for i := 0; i < *n; i++ {
		if err := m.resetLedger(); err != nil {
			return err
		}
		if *cold {
			if err := os.RemoveAll(filepath.Join(common, "rally", "cache")); err != nil {
				return err
			}
		}
		t := time.Now()
		l, err := ledger.Open(common, nil)
		if err != nil {
			return err
		}
		scope := fmt.Sprintf("file:src/profile/%d-%d.go", stamp, i)
		owner := facts.Owner{Tool: "bench:profile"}
		if *read {
			_, err = l.Read()
		} else {
			_, err = l.Append(facts.Claim(facts.ClaimRequest{Owner: owner, Scopes: []string{scope}}))
		}
		l.Close()
		if err != nil {
			return err
		}
		ds = append(ds, time.Since(t))
		if !*read && !*reset {
			if err := releaseInProc(common, owner, scope); err != nil {
				return err
			}
		}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	fmt.Printf("%d ops, median %s, p10 %s, p90 %s\n", *n, msStr(ds[len(ds)/2]), msStr(ds[len(ds)/10]), msStr(ds[len(ds)*9/10]))
	return nil
}
