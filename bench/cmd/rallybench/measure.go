package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/ledger"
	"github.com/git-rally/git-rally/refs"
)

// baseCases are the cases a scenario runs unless scenarioCases names
// others; measure runs them round-robin for -runs rounds so that a noisy
// neighbour hurts every case alike.
var baseCases = []string{"revparse", "room", "room-direct", "claim", "claim-signed", "floor", "inproc", "fsync"}

// plain is where the table of issue 14 is measured; the open-claims rooms
// (open20, open1619) only need a room and a claim.
var scenarioCases = map[string][]string{
	"plain":    {"revparse", "room", "room-direct", "claim", "claim-direct", "claim-signed", "floor", "floor4", "inproc", "fsync", "hello", "version", "probe-first", "probe-hotdeps", "log", "cold"},
	"open20":   {"room", "claim"},
	"open1619": {"room", "claim"},
	"writers":  {"writers"},
}

var caseNames = map[string]string{
	"revparse":      "git rev-parse refs/rally/ledger",
	"room":          "git rally room --json (warm cache)",
	"room-direct":   "git-rally room --json (warm, no git wrapper)",
	"claim":         "git rally claim <file> (whole process)",
	"claim-direct":  "git-rally claim <file> (no git wrapper)",
	"claim-signed":  "the same claim, signed (rally.sign, an ed25519 key file)",
	"floor":         "7-process floor: hash-object,5x mktree,commit-tree,update-ref",
	"floor4":        "4-process floor: hash-object,mktree (1 entry),commit-tree,update-ref",
	"inproc":        "in-process ledger.Open+Append(claim)+Close",
	"fsync":         "O_APPEND+fsync of one line to a plain file",
	"hello":         "a static Go hello world (CGO_ENABLED=0)",
	"version":       "git-rally version",
	"probe-first":   "git-rally built -tags rallyprobe: exit from a package init that imports only os",
	"probe-hotdeps": "... from an init that imports the ledger's packages (facts, refs, hooks), no cobra",
	"log":           "git rally log --json -n 10",
	"cold":          "git rally room --json after rm -rf .git/rally/cache",
	"writers":       "8 writers x 200 appends: wall time",
}

// rssCases also record the process's maximum resident set (wait4's
// rusage, the largest of git and git-rally): "<case>.rss", in MiB.
var rssCases = map[string]bool{"log": true, "cold": true}

const (
	floorRef  = "refs/rally/floor"
	floor4Ref = "refs/rally/floor4"
)

type measurer struct {
	dir, common string
	bin, hello  string
	probe       string // git-rally built with -tags rallyprobe (bench/probe)
	scenario    string
	size        string
	reset       bool
	packedHead  refs.Hash // with -reset-packed: the head every run starts from
	savedState  []byte    // with -reset-packed: state.bin at packedHead
	floorTip    refs.Hash // the floor's own chain; zero: start at the ledger head
	floor4Tip   refs.Hash
	round       int
	samples     map[string][]sample
	firstClaim  time.Duration
	signEnv     []string // git config of the signed claim (GIT_CONFIG_COUNT)
	lastRSS     float64  // MiB, of the last process run through proc
	writers     int      // the writers case: processes, appends each
	each        int
}

type sample struct {
	round int
	v     float64 // ms, or MiB for <case>.rss
}

func (m *measurer) cases() []string {
	if cs, ok := scenarioCases[m.scenario]; ok {
		return cs
	}
	return baseCases
}

func runMeasure(args []string) error {
	fl := flag.NewFlagSet("measure", flag.ExitOnError)
	var ms []*measurer
	bin := fl.String("bin", "", "the git-rally binary (also on PATH for `git rally`)")
	fl.Func("target", "scenario:size:repository[:reset-packed], repeated; every round runs every case on every target in turn\n(reset-packed: before every append, move the ledger back to its packed head and restore the cache)", func(v string) error {
		parts := strings.Split(v, ":")
		if len(parts) < 3 || len(parts) > 4 || (len(parts) == 4 && parts[3] != "reset-packed") {
			return fmt.Errorf("want scenario:size:dir[:reset-packed], got %q", v)
		}
		ms = append(ms, &measurer{scenario: parts[0], size: parts[1], dir: parts[2], reset: len(parts) == 4})
		return nil
	})
	runs := fl.Int("runs", 41, "rounds")
	hello := fl.String("hello", "", "a static hello world binary (the hello case)")
	probe := fl.String("probe", "", "git-rally built with -tags rallyprobe (the probe-* cases; none: skipped)")
	coldEvery := fl.Int("cold-every", 4, "run the cold case (the room after deleting the cache) every this many rounds")
	writersEvery := fl.Int("writers-every", 20, "run the writers case every this many rounds")
	nWriters := fl.Int("writers", 8, "writers case: concurrent writer processes")
	each := fl.Int("each", 200, "writers case: appends per writer")
	out := fl.String("out", "", "append medians to this file")
	fl.Parse(args)
	if len(ms) == 0 || *bin == "" || *out == "" {
		return fmt.Errorf("measure needs -target, -bin and -out")
	}
	for _, m := range ms {
		m.hello, m.probe, m.writers, m.each = *hello, *probe, *nWriters, *each
		if err := m.prepare(*bin); err != nil {
			return fmt.Errorf("%s/%s: %w", m.scenario, m.size, err)
		}
	}
	// Round-robin over targets as well as cases: the machine's state
	// drifts (the kernel writing back what building the ledgers wrote, a
	// neighbour's load), and a target measured in a block of its own would
	// carry the drift of its minutes into the ratios between targets.
	// Progress goes to stderr, one line a case in the first round (the
	// slowest, and where a stuck case shows) and one line a round after
	// it, so the minutes of a run are never silent; stdout stays the
	// report.
	started := time.Now()
	for round := 0; round < *runs; round++ {
		if round > 0 {
			fmt.Fprintf(os.Stderr, "rallybench: round %d/%d (%s elapsed)\n", round+1, *runs, time.Since(started).Round(time.Second))
		}
		for _, m := range ms {
			m.round = round
			for _, c := range m.cases() {
				if c == "cold" && round%*coldEvery != 0 || c == "writers" && round%*writersEvery != 0 {
					continue
				}
				d, err := m.run(c)
				if err != nil {
					return fmt.Errorf("%s/%s %s, round %d: %w", m.scenario, m.size, c, round, err)
				}
				if c == "claim" && round == 0 {
					m.firstClaim = d
				}
				if round == 0 {
					fmt.Fprintf(os.Stderr, "rallybench: round 1/%d %s/%s %s: %.1f ms (%s elapsed)\n", *runs, m.scenario, m.size, c, msf(d), time.Since(started).Round(time.Second))
				}
				m.samples[c] = append(m.samples[c], sample{round, msf(d)})
				if rssCases[c] {
					m.samples[c+".rss"] = append(m.samples[c+".rss"], sample{round, m.lastRSS})
				}
			}
		}
	}
	f, err := os.OpenFile(*out, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o666)
	if err != nil {
		return err
	}
	defer f.Close()
	load, _ := os.ReadFile("/proc/loadavg")
	for _, m := range ms {
		fmt.Printf("## %s, %s facts%s\n", m.scenario, m.size, map[bool]string{true: " (each append starts from the packed head)"}[m.reset])
		fmt.Printf("  %-68s %9s %9s %9s   (%d rounds)\n", "median of whole-process or per-op wall time", "median", "p10", "p90", *runs)
		for _, c := range m.cases() {
			for _, k := range []string{c, c + ".rss", c + ".rate", c + ".p50", c + ".p99", c + ".max", c + ".cpu"} {
				ss := m.samples[k]
				if len(ss) == 0 {
					continue
				}
				for _, x := range ss {
					fmt.Fprintf(f, "%s %s %s %d %.4f\n", m.scenario, m.size, k, x.round, x.v)
				}
				v := make([]float64, len(ss))
				for i, x := range ss {
					v[i] = x.v
				}
				sort.Float64s(v)
				name, unit := caseNames[c], "ms"
				switch strings.TrimPrefix(k, c) {
				case ".rss":
					name, unit = "  its max RSS", "MiB"
				case ".rate":
					name, unit = "  appends per second", "/s"
				case ".p50", ".p99", ".max":
					name = "  latency of one append (whole process), " + k[len(c)+1:]
				case ".cpu":
					name = "  CPU time (user+system) of one append process"
				}
				fmt.Printf("  %-68s %7.2f%-3s %7.2f%-3s %7.2f%-3s (%d)\n", name, v[len(v)/2], unit, v[len(v)/10], unit, v[len(v)*9/10], unit, len(v))
			}
		}
		if m.firstClaim > 0 {
			fmt.Printf("  first claim: %s\n", msStr(m.firstClaim))
		}
		fmt.Println()
	}
	for _, m := range ms {
		if len(m.samples["writers"]) == 0 {
			continue
		}
		if err := waitRepack(m.common); err != nil {
			return err
		}
		ok := 1
		if _, err := refs.Git(m.dir, nil, "fsck", "--no-dangling", "--no-progress"); err != nil {
			fmt.Printf("%s/%s: git fsck after the writers FAILED: %v\n", m.scenario, m.size, err)
			ok = 0
		} else {
			fmt.Printf("%s/%s: every acknowledged fact in the ledger after each of %d writers runs; git fsck --no-dangling: ok\n",
				m.scenario, m.size, len(m.samples["writers"]))
		}
		fmt.Fprintf(f, "%s %s writers.fsck 0 %d\n", m.scenario, m.size, ok)
	}
	fmt.Printf("load average after: %s\n", strings.TrimSpace(string(load)))
	return nil
}

// prepare warms the target up (the cache at the head, the binary in the
// page cache) and, with reset, remembers the packed head and its cache.
func (m *measurer) prepare(bin string) error {
	m.bin, m.common, m.samples = bin, filepath.Join(m.dir, ".git"), map[string][]sample{}
	head, err := m.head()
	if err != nil {
		return err
	}
	for i := 0; i < 3; i++ {
		if _, err := refs.Git(m.dir, nil, "rally", "room", "--json"); err != nil {
			return fmt.Errorf("warm-up room: %w", err)
		}
	}
	if m.reset {
		m.packedHead = head
		if m.savedState, err = os.ReadFile(filepath.Join(m.common, "rally", "cache", "state.bin")); err != nil {
			return err
		}
	}
	refs.Git(m.dir, nil, "update-ref", "-d", floorRef)
	refs.Git(m.dir, nil, "update-ref", "-d", floor4Ref)
	key, err := writeSigningKey(filepath.Join(m.common, "rally", "bench-signing-key"))
	if err != nil {
		return err
	}
	m.signEnv = []string{"GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=rally.sign", "GIT_CONFIG_VALUE_0=true",
		"GIT_CONFIG_KEY_1=user.signingKey", "GIT_CONFIG_VALUE_1=" + key}
	return nil
}

func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func msStr(d time.Duration) string {
	return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
}

func (m *measurer) head() (refs.Hash, error) {
	out, err := refs.Git(m.dir, nil, "rev-parse", "--verify", ledger.LedgerRef)
	if err != nil {
		return refs.ZeroHash, err
	}
	return refs.ParseHash(out)
}

// resetLedger puts the ledger and the cache back to the packed head (not
// timed), so the next append reads a packed head commit as the first
// append after `git gc` does. It runs right after a timed append, and it
// fsyncs the cache file it rewrote, so that the next timed append's own
// fsync does not write it back as well.
func (m *measurer) resetLedger() error {
	if !m.reset {
		return nil
	}
	if _, err := refs.Git(m.dir, nil, "update-ref", ledger.LedgerRef, m.packedHead.String()); err != nil {
		return err
	}
	return writeSync(filepath.Join(m.common, "rally", "cache", "state.bin"), os.O_TRUNC, m.savedState)
}

// writeSync writes b to the file at p opened with flag (O_TRUNC or
// O_APPEND) and fsyncs it.
func writeSync(p string, flag int, b []byte) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|flag, 0o666)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (m *measurer) run(c string) (time.Duration, error) {
	switch c {
	case "revparse":
		return timeIt(func() error { _, err := refs.Git(m.dir, nil, "rev-parse", ledger.LedgerRef); return err })
	case "room":
		return timeIt(func() error { _, err := refs.Git(m.dir, nil, "rally", "room", "--json"); return err })
	case "room-direct":
		return timeIt(func() error { return m.direct("room", "--json") })
	case "claim", "claim-signed", "claim-direct":
		p := fmt.Sprintf("src/bench/%s-%s-%d-%s.go", m.scenario, m.size, m.round, c)
		var env []string
		if c == "claim-signed" {
			env = m.signEnv
		}
		d, err := timeIt(func() error {
			if c == "claim-direct" {
				return m.direct("claim", p, "--tool", "bench:claimer")
			}
			_, err := refs.Git(m.dir, env, "rally", "claim", p, "--tool", "bench:claimer")
			return err
		})
		if err == nil && m.reset {
			err = m.resetLedger()
		} else if err == nil {
			// Not timed: release it, so the benchmark's own claims do not
			// pile up in the room and the projection.
			_, err = refs.Git(m.dir, nil, "rally", "release", p, "--tool", "bench:claimer")
		}
		return d, err
	case "floor":
		return m.floor()
	case "floor4":
		return m.floor4()
	case "writers":
		r, err := writers(m.dir, m.bin, m.writers, m.each, fmt.Sprintf("%s-%s-%d", m.scenario, m.size, m.round))
		if err != nil {
			return 0, err
		}
		ls := sortedDurations(r.latencies)
		for k, v := range map[string]float64{"rate": r.rate(), "p50": msf(pct(ls, 50)), "p99": msf(pct(ls, 99)), "max": msf(ls[len(ls)-1]),
			"cpu": msf(r.cpu / time.Duration(max(r.appends, 1)))} {
			m.samples["writers."+k] = append(m.samples["writers."+k], sample{m.round, v})
		}
		// The next case must not run beside the writers' background pack.
		return r.wall, waitRepack(m.common)
	case "hello":
		if m.hello == "" {
			return 0, fmt.Errorf("the hello case needs -hello")
		}
		return m.proc(nil, m.hello)
	case "version":
		return m.proc(nil, m.bin, "version")
	case "probe-first", "probe-hotdeps":
		if m.probe == "" {
			return 0, fmt.Errorf("the %s case needs -probe", c)
		}
		return m.proc(nil, m.probe, "__"+c)
	case "log":
		return m.proc(nil, "git", "rally", "log", "--json", "-n", "10")
	case "cold":
		if err := os.RemoveAll(filepath.Join(m.common, "rally", "cache")); err != nil {
			return 0, err
		}
		return m.proc(nil, "git", "rally", "room", "--json")
	case "inproc":
		scope := fmt.Sprintf("file:src/bench/inproc-%s-%s-%d.go", m.scenario, m.size, m.round)
		owner := facts.Owner{Tool: "bench:inproc"}
		d, err := timeIt(func() error {
			l, err := ledger.Open(m.common, nil)
			if err != nil {
				return err
			}
			defer l.Close()
			_, err = l.Append(facts.Claim(facts.ClaimRequest{Owner: owner, Scopes: []string{scope}}))
			return err
		})
		if err == nil && m.reset {
			err = m.resetLedger()
		} else if err == nil {
			err = releaseInProc(m.common, owner, scope)
		}
		return d, err
	case "fsync":
		p := filepath.Join(m.common, "rally", "bench-fsync.jsonl")
		line := []byte(`{"v":1,"id":"f_0123456789abcdef","kind":"claim","tool":"bench:fsync","at":"2026-01-01T00:00:00.000Z","clock":1,"scopes":["file:src/a.go"]}` + "\n")
		return timeIt(func() error { return writeSync(p, os.O_APPEND, line) })
	}
	return 0, fmt.Errorf("unknown case %q", c)
}

func releaseInProc(common string, o facts.Owner, scope string) error {
	l, err := ledger.Open(common, nil)
	if err != nil {
		return err
	}
	defer l.Close()
	_, err = l.Append(facts.Release(o, nil, []string{scope}, "bench"))
	return err
}

func (m *measurer) direct(args ...string) error {
	cmd := exec.Command(m.bin, args...)
	cmd.Dir = m.dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%v: %s", err, errb.String())
	}
	return nil
}

// proc runs one process in the repository, times it and keeps its
// maximum resident set. The rusage wait4 returns counts, as the child's,
// the resident set of the process that started it up to its exec (Go
// starts children with vfork, sharing its memory until then): taken
// here, it would be this process's, tens of MiB. So a fresh rallybench
// ("rusage", a few MiB) starts the process, times it and reports wait4's
// figures for it.
func (m *measurer) proc(env []string, name string, args ...string) (time.Duration, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(self, append([]string{"rusage", name}, args...)...)
	cmd.Dir = m.dir
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, errb.String())
	}
	var ns, kb int64
	if _, err := fmt.Sscanf(out.String(), "%d %d", &ns, &kb); err != nil {
		return 0, fmt.Errorf("rusage %s: %q: %v", name, out.String(), err)
	}
	m.lastRSS = float64(kb) / 1024
	return time.Duration(ns), nil
}

// runRusage is "rallybench rusage <command> <args>": it runs the command
// (its output discarded, its stdin this one's) and prints its wall time in
// ns, its maximum resident set in KiB and its CPU time (user + system) in
// ns, from wait4.
func runRusage(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("rusage needs a command")
	}
	cmd := exec.Command(args[0], args[1:]...)
	var errb bytes.Buffer
	cmd.Stdin, cmd.Stderr = os.Stdin, &errb
	t := time.Now()
	err := cmd.Run()
	d := time.Since(t)
	if err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, errb.String())
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return fmt.Errorf("no rusage")
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	fmt.Printf("%d %d %d\n", d.Nanoseconds(), ru.Maxrss, cpu.Nanoseconds()) // KiB on Linux
	return nil
}

func timeIt(fn func() error) (time.Duration, error) {
	t := time.Now()
	err := fn()
	return time.Since(t), err
}
