package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/git-rally/git-rally/ledger"
	"github.com/git-rally/git-rally/refs"
)

// writersEnv is added to the writers' environment.
var writersEnv = []string{"RALLY_AUTOPACK=1"}

// writersResult is one run of concurrent writers.
type writersResult struct {
	appends   int
	wall      time.Duration
	latencies []time.Duration // every command, whole process
	cpu       time.Duration   // user + system time of every command
}

func (r writersResult) rate() float64 { return float64(r.appends) / r.wall.Seconds() }

// runWriters is the "8 writers x 200 appends" of issue 14 on its own:
// rallybench writers -dir REPO -bin git-rally [-writers 8] [-each 200] [-runs 1].
func runWriters(args []string) error {
	fl := flag.NewFlagSet("writers", flag.ExitOnError)
	dir := fl.String("dir", "", "repository")
	bin := fl.String("bin", "git-rally", "the git-rally binary")
	n := fl.Int("writers", 8, "concurrent writer processes")
	each := fl.Int("each", 200, "appends per writer")
	runs := fl.Int("runs", 1, "runs, one after the other")
	autopack := fl.Bool("autopack", true, "leave rally's background pack on (RALLY_AUTOPACK=1), as in use")
	fl.Parse(args)
	if !*autopack {
		writersEnv = []string{"RALLY_AUTOPACK=0"}
	}
	if *dir == "" {
		return fmt.Errorf("writers needs -dir")
	}
	for i := 0; i < *runs; i++ {
		r, err := writers(*dir, *bin, *n, *each, fmt.Sprint(time.Now().UnixNano()))
		if err != nil {
			return err
		}
		ls := sortedDurations(r.latencies)
		fmt.Printf("%d writers x %d appends: %d appends in %s = %.1f appends/s, latency p50 %s p99 %s max %s; CPU %s per append\n",
			*n, *each, r.appends, r.wall.Round(time.Millisecond), r.rate(), msStr(pct(ls, 50)), msStr(pct(ls, 99)), msStr(ls[len(ls)-1]),
			msStr(r.cpu/time.Duration(max(r.appends, 1))))
	}
	if err := waitRepack(filepath.Join(*dir, ".git")); err != nil {
		return err
	}
	if _, err := refs.Git(*dir, nil, "fsck", "--no-dangling", "--no-progress"); err != nil {
		return err
	}
	fmt.Println("git fsck: ok")
	return nil
}

// writers starts n git-rally processes at once, each making each appends
// in a loop as an agent would (claim a file of its own, a note, release
// the file, a note, ...), with the background pack on as in real use. It
// then checks that the ledger grew by exactly the acknowledged facts and
// holds every one of them.
func writers(dir, bin string, n, each int, tag string) (writersResult, error) {
	before, err := ledgerIDs(dir)
	if err != nil {
		return writersResult{}, err
	}
	env := writersEnv
	var mu sync.Mutex
	var res writersResult
	var acked []string
	var firstErr error
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			tool := fmt.Sprintf("bench:writer-%d", w)
			<-start
			for i := 0; i < each; i++ {
				p := fmt.Sprintf("src/writers/%s/w%d-%d.go", tag, w, i/4)
				var argv []string
				switch i % 4 {
				case 0:
					argv = []string{"claim", p}
				case 2:
					argv = []string{"release", p}
				default:
					argv = []string{"note", "--subject", fmt.Sprintf("writer %d, append %d", w, i)}
				}
				argv = append(argv, "--tool", tool, "--json")
				t := time.Now()
				ids, cpu, err := appendProc(dir, env, bin, argv...)
				d := time.Since(t)
				mu.Lock()
				res.cpu += cpu
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("writer %d, append %d: %w", w, i, err)
				}
				res.latencies = append(res.latencies, d)
				acked = append(acked, ids...)
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}(w)
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	res.wall = time.Since(t0)
	res.appends = len(acked)
	if firstErr != nil {
		return res, firstErr
	}
	after, err := ledgerIDs(dir)
	if err != nil {
		return res, err
	}
	if len(after) != len(before)+len(acked) {
		return res, fmt.Errorf("the ledger holds %d facts after %d acknowledged appends to %d, want %d",
			len(after), len(acked), len(before), len(before)+len(acked))
	}
	for _, id := range acked {
		if !after[id] {
			return res, fmt.Errorf("acknowledged fact %s is not in the ledger", id)
		}
	}
	return res, nil
}

// appendProc runs one writing command with --json and returns the ids of
// the facts it wrote.
func appendProc(dir string, env []string, bin string, args ...string) ([]string, time.Duration, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, 0, fmt.Errorf("git-rally %s: %v: %s", strings.Join(args, " "), err, errb.String())
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	var r struct {
		Facts []struct {
			ID string `json:"id"`
		} `json:"facts"`
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil || len(r.Facts) == 0 {
		return nil, cpu, fmt.Errorf("git-rally %s: no facts in %q", strings.Join(args, " "), out.String())
	}
	ids := make([]string, len(r.Facts))
	for i, f := range r.Facts {
		ids[i] = f.ID
	}
	return ids, cpu, nil
}

// ledgerIDs lists the fact ids in the ledger's tree, with git.
func ledgerIDs(dir string) (map[string]bool, error) {
	out, err := refs.Git(dir, nil, "ls-tree", "-r", "--name-only", ledger.LedgerRef)
	if err != nil {
		return nil, err
	}
	return listedIDs(out), nil
}

// listedIDs are the fact ids in an ls-tree -r --name-only listing of a
// ledger tree.
func listedIDs(out string) map[string]bool {
	ids := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "facts/") && strings.HasSuffix(l, ".json") {
			ids[strings.TrimSuffix(l[strings.LastIndexByte(l, '/')+1:], ".json")] = true
		}
	}
	return ids
}

// waitRepack waits (at most a minute) until no git repack runs in the
// repository: the writers' background pack must not run beside the next
// measurement.
func waitRepack(common string) error {
	if c, err := filepath.EvalSymlinks(common); err == nil {
		common = c
	}
	if c, err := filepath.Abs(common); err == nil {
		common = c
	}
	deadline := time.Now().Add(time.Minute)
	for {
		busy := false
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if err != nil || !bytes.Contains(cmd, []byte("repack")) {
				continue
			}
			if cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd")); err == nil && cwd == common {
				busy = true
			}
		}
		if !busy {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("a git repack still runs in %s after a minute", common)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func sortedDurations(ds []time.Duration) []time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s
}

// pct is the p-th percentile (nearest rank) of sorted durations.
func pct(s []time.Duration, p int) time.Duration {
	if len(s) == 0 {
		return 0
	}
	i := (len(s)*p + 99) / 100
	if i < 1 {
		i = 1
	}
	return s[i-1]
}
