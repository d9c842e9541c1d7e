package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Fifty clones syncing through one git daemon (issue 31): every clone
// appends and syncs at once, round after round; then every clone must
// hold every acknowledged fact, all at one head, no sync having failed.
// The sync times are quoted against one clone syncing alone, measured
// first in the same run.
//
//	rallybench clones -bin git-rally -dir WORK [-clones 50] [-rounds 3] [-alone 20]

// clonesConfig is one run.
type clonesConfig struct {
	bin    string // git-rally
	dir    string // an empty work directory
	clones int
	rounds int // appends and syncs per clone, all clones at once
	alone  int // syncs of the first clone alone, before the others start
	// syncArgs are added to every sync (a test passes --no-push to see
	// a lost fact reported).
	syncArgs []string
}

// clonesResult is what a run found.
type clonesResult struct {
	alone, together []time.Duration // each sync, whole process
	failed          []string        // syncs that exited non-zero: clone, round, stderr
	acked           int             // facts acknowledged by an append
	lost            []string        // acknowledged facts some clone lacks at the end: clone id
	heads           int             // distinct ledger heads at the end (1: converged)
	passes          int             // sequential sync passes until one head
}

func runClones(args []string) error {
	fl := flag.NewFlagSet("clones", flag.ExitOnError)
	var c clonesConfig
	fl.StringVar(&c.bin, "bin", "git-rally", "the git-rally binary")
	fl.StringVar(&c.dir, "dir", "", "work directory (made; must not exist or be empty)")
	fl.IntVar(&c.clones, "clones", 50, "clones")
	fl.IntVar(&c.rounds, "rounds", 3, "rounds: each clone appends a note and syncs, all at once")
	fl.IntVar(&c.alone, "alone", 20, "syncs of one clone alone (the baseline)")
	fl.Parse(args)
	if c.dir == "" {
		return fmt.Errorf("clones needs -dir")
	}
	r, err := clones(c)
	if err != nil {
		return err
	}
	a, t := sortedDurations(r.alone), sortedDurations(r.together)
	fmt.Printf("one clone alone: %d syncs, median %s, p99 %s, max %s\n", len(a), msStr(pct(a, 50)), msStr(pct(a, 99)), msStr(a[len(a)-1]))
	fmt.Printf("%d clones x %d rounds at once: %d syncs, median %s, p99 %s, max %s (median %.1fx, p99 %.1fx alone)\n",
		c.clones, c.rounds, len(t), msStr(pct(t, 50)), msStr(pct(t, 99)), msStr(t[len(t)-1]),
		float64(pct(t, 50))/float64(pct(a, 50)), float64(pct(t, 99))/float64(pct(a, 99)))
	fmt.Printf("acknowledged facts %d, lost %d, failed syncs %d, heads at the end %d after %d sequential passes\n",
		r.acked, len(r.lost), len(r.failed), r.heads, r.passes)
	for _, f := range r.failed {
		fmt.Println("  failed:", f)
	}
	if len(r.lost) > 0 || len(r.failed) > 0 || r.heads != 1 {
		return fmt.Errorf("the clones did not converge")
	}
	return nil
}

// clones runs one configuration; an error is a broken set-up, not a
// finding (findings are in the result).
func clones(c clonesConfig) (*clonesResult, error) {
	dir, err := filepath.Abs(c.dir)
	if err != nil {
		return nil, err
	}
	env := clonesEnv(dir)
	srv := filepath.Join(dir, "srv")
	if err := os.MkdirAll(filepath.Join(dir, "home"), 0o777); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(srv, 0o777); err != nil {
		return nil, err
	}
	if _, err := run(srv, env, "git", "init", "-q", "--bare", "origin.git"); err != nil {
		return nil, err
	}
	url, stop, err := startDaemon(srv, env)
	if err != nil {
		return nil, err
	}
	defer stop()

	names := make([]string, c.clones)
	for i := range names {
		names[i] = fmt.Sprintf("c%02d", i)
		d := filepath.Join(dir, names[i])
		for _, argv := range [][]string{
			{"git", "init", "-q", d},
			{"git", "-C", d, "remote", "add", "origin", url + "/origin.git"},
		} {
			if _, err := run(dir, env, argv[0], argv[1:]...); err != nil {
				return nil, err
			}
		}
		if _, err := run(d, env, c.bin, "init", "--remote", "origin"); err != nil {
			return nil, err
		}
		if i == 0 { // the first publishes the ledger
			if _, err := run(d, env, c.bin, "note", "--subject", "start", "--tool", "bench:"+names[i]); err != nil {
				return nil, err
			}
			if _, err := run(d, env, c.bin, "sync"); err != nil {
				return nil, err
			}
		}
	}
	r := &clonesResult{}
	var mu sync.Mutex
	var acked []string
	// round: one clone appends a note and syncs; the sync is timed.
	round := func(i, k int, into *[]time.Duration) {
		d := filepath.Join(dir, names[i])
		out, err := run(d, env, c.bin, "note", "--json", "--subject", fmt.Sprintf("round %d", k), "--tool", "bench:"+names[i])
		var ids []string
		if err == nil {
			ids, err = factIDs(out)
		}
		t := time.Now()
		var serr error
		if err == nil {
			_, serr = run(d, env, c.bin, append([]string{"sync"}, c.syncArgs...)...)
		}
		el := time.Since(t)
		mu.Lock()
		defer mu.Unlock()
		acked = append(acked, ids...)
		switch {
		case err != nil:
			r.failed = append(r.failed, fmt.Sprintf("%s round %d: append: %v", names[i], k, err))
		case serr != nil:
			r.failed = append(r.failed, fmt.Sprintf("%s round %d: %v", names[i], k, serr))
		default:
			*into = append(*into, el)
		}
	}
	for k := 0; k < c.alone; k++ {
		round(0, -1-k, &r.alone)
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range names {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			for k := 0; k < c.rounds; k++ {
				round(i, k, &r.together)
			}
		}(i)
	}
	close(start)
	wg.Wait()

	// Sequential passes until every clone is at one head: each pass
	// brings every clone the origin's union, and pushes what a merge
	// made.
	heads := map[string]bool{}
	for r.passes = 1; r.passes <= 3; r.passes++ {
		heads = map[string]bool{}
		for _, n := range names {
			if _, err := run(filepath.Join(dir, n), env, c.bin, append([]string{"sync"}, c.syncArgs...)...); err != nil {
				r.failed = append(r.failed, fmt.Sprintf("%s converging: %v", n, err))
			}
		}
		for _, n := range names {
			h, err := run(filepath.Join(dir, n), env, "git", "rev-parse", "refs/rally/ledger")
			if err != nil {
				return nil, err
			}
			heads[strings.TrimSpace(h)] = true
		}
		if len(heads) == 1 {
			break
		}
	}
	r.heads = len(heads)
	r.acked = len(acked)
	for _, n := range append(names, "srv/origin.git") {
		have, err := treeIDs(filepath.Join(dir, n), env)
		if err != nil {
			return nil, err
		}
		for _, id := range acked {
			if !have[id] {
				r.lost = append(r.lost, n+": "+id)
			}
		}
	}
	return r, nil
}

// clonesEnv is a private git environment under dir.
func clonesEnv(dir string) []string {
	env := []string{
		"HOME=" + filepath.Join(dir, "home"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@example.com",
		"GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@example.com",
	}
	for _, e := range os.Environ() {
		k, _, _ := strings.Cut(e, "=")
		if k == "HOME" || strings.HasPrefix(k, "GIT_") || strings.HasPrefix(k, "RALLY_") {
			continue
		}
		env = append(env, e)
	}
	return env
}

// run runs a command (at most 5 minutes) and returns its stdout; an error
// carries its stderr.
func run(dir string, env []string, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s %s: %v: %s", filepath.Base(name), strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// factIDs reads the ids of an append's --json answer.
func factIDs(out string) ([]string, error) {
	var r struct {
		Facts []struct {
			ID string `json:"id"`
		} `json:"facts"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Facts) == 0 {
		return nil, fmt.Errorf("no facts in %q", out)
	}
	var ids []string
	for _, f := range r.Facts {
		ids = append(ids, f.ID)
	}
	return ids, nil
}

// treeIDs lists the fact ids in a repository's ledger tree, with git.
func treeIDs(dir string, env []string) (map[string]bool, error) {
	out, err := run(dir, env, "git", "ls-tree", "-r", "--name-only", "refs/rally/ledger")
	if err != nil {
		return nil, err
	}
	return listedIDs(out), nil
}

// startDaemon serves the repositories under base over git:// on
// 127.0.0.1, receive-pack enabled and no connection limit (fifty clones
// fetch at once), and returns its URL and the function that stops it
// (the daemon and its children: its own process group).
func startDaemon(base string, env []string) (string, func(), error) {
	for try := 0; try < 5; try++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", nil, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		cmd := exec.Command("git", "daemon", "--listen=127.0.0.1", "--port="+strconv.Itoa(port),
			"--export-all", "--enable=receive-pack", "--base-path="+base, "--reuseaddr", "--informative-errors",
			"--init-timeout=10", "--timeout=120", "--max-connections=0")
		cmd.Env, cmd.Dir = env, base
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		var logb bytes.Buffer
		cmd.Stderr = &logb
		if err := cmd.Start(); err != nil {
			return "", nil, err
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		stop := func() {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			select {
			case <-exited:
				deadline = time.Time{}
				continue
			default:
			}
			if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second); err == nil {
				c.Close()
				return fmt.Sprintf("git://127.0.0.1:%d", port), stop, nil
			}
			time.Sleep(20 * time.Millisecond)
		}
		stop()
	}
	return "", nil, fmt.Errorf("git daemon did not start")
}
