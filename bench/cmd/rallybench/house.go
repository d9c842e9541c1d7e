package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/ledger"
)

// The bars of issue 27, "Speed".
const (
	barHouseBase  = 1.03       // every hot command ≤ 1.03x today's binary
	barHouseLimit = 1.2        // git rally claim ≤ 1.2x (git hello + in-process append)
	barHouseSize  = 16_000_000 // the hot binary ≤ 16 MB (decimal; 16 MiB is 16,777,216)
)

// houseCases are the hot commands, each run with the base binary and the
// new one in turn (the order alternating by round) on their own copies of
// the same repository. Every one but gclaim runs git-rally directly (no
// git wrapper, whose fixed cost would only pull the ratio towards 1);
// gclaim is `git rally claim` as an agent types it, the figure the
// physical limit is measured against.
var houseCases = []string{"claim", "check", "room", "hook-claude", "hook-codex", "version", "gclaim"}

var houseNames = map[string]string{
	"claim":       "git-rally claim <file>",
	"check":       "git-rally check before-write <file>",
	"room":        "git-rally room --json",
	"hook-claude": "git-rally hook claude pre-tool-use (Edit)",
	"hook-codex":  "git-rally hook codex pre-tool-use (apply_patch)",
	"version":     "git-rally version",
	"gclaim":      "git rally claim <file> (git's wrapper)",
}

// houseSide is one binary's copies of one ledger.
type houseSide struct {
	bins  []string   // directories holding a copy of git-rally, used in turn
	dirs  []string   // copies of the repository, used in turn
	envs  [][]string // per bins[i]: PATH with it first
	name  string     // base or new
	times map[string][]houseSample
}

// pick is the copy of the repository and of the binary a round uses:
// every repository copy meets every binary copy. Copies of the binary,
// because its place in the page cache (the physical pages its text lands
// in) made one binary 3-7% slower than an identical one for a whole run.
func (s *houseSide) pick(round int) (dir, bin string, env []string) {
	i := (round / len(s.dirs)) % len(s.bins)
	return s.dirs[round%len(s.dirs)], s.bins[i], s.envs[i]
}

type houseSample struct{ wall, cpu float64 } // ms

type houseSize struct {
	label     string
	base, new *houseSide
	hello     []houseSample // git hello (git's wrapper + a static hello world)
	inproc    []houseSample // ledger.Open + Append(claim) + Close in this process
	cold      []houseSample // git rallyappend: the same append in a static binary of its own, for information
	newGclaim []houseSample // the new binary's git rally claim, same index as hello and inproc
	// for information, each started under a timer slack (-slack): the new
	// binary's git rally claim, git hello and git rallyappend
	slackGclaim, slackHello, slackCold []houseSample
	rounds                             int
	payloadDir                         string
}

// runHouse is "rallybench house": issue 27's speed table. Every round
// runs, for every ledger size, every hot command with the base binary and
// the new one (alternating which goes first), then git hello and the
// in-process append, so the machine's drift falls on all of them alike;
// ratios are medians of the per-round ratios.
func runHouse(args []string) error {
	fl := flag.NewFlagSet("house", flag.ExitOnError)
	var baseBins, newBins []string
	fl.Func("base", "a directory holding the base git-rally, repeated: copies of the binary used in turn", func(v string) error { baseBins = append(baseBins, v); return nil })
	fl.Func("new", "a directory holding the new git-rally, repeated", func(v string) error { newBins = append(newBins, v); return nil })
	helloBin := fl.String("hello", "", "directory holding git-hello (a static hello world) and git-rallyappend (bench/cmd/rallyappend)")
	server := fl.String("server", "", "the new git-rally-server binary (its size is printed)")
	baseRev := fl.String("base-rev", "", "the base revision (printed)")
	runs := fl.Int("runs", 61, "rounds")
	slack := fl.Duration("slack", 5*time.Millisecond, "also time git rally claim, git hello and git rallyappend started under this timer slack, for information (0: not)")
	var sizes []*houseSize
	fl.Func("target", "size:base|new:repository, repeated (several copies per side are used in turn)", func(v string) error {
		p := strings.SplitN(v, ":", 3)
		if len(p) != 3 || (p[1] != "base" && p[1] != "new") {
			return fmt.Errorf("want size:base|new:dir, got %q", v)
		}
		var z *houseSize
		for _, s := range sizes {
			if s.label == p[0] {
				z = s
			}
		}
		if z == nil {
			z = &houseSize{label: p[0], base: &houseSide{}, new: &houseSide{}}
			sizes = append(sizes, z)
		}
		side := z.base
		if p[1] == "new" {
			side = z.new
		}
		side.dirs = append(side.dirs, p[2])
		return nil
	})
	fl.Parse(args)
	if len(baseBins) == 0 || len(newBins) == 0 || *helloBin == "" || len(sizes) == 0 {
		return fmt.Errorf("house needs -base, -new, -hello and -target")
	}
	path := os.Getenv("PATH")
	payloads, err := os.MkdirTemp("", "rallybench-house")
	if err != nil {
		return err
	}
	defer os.RemoveAll(payloads)
	for _, z := range sizes {
		if len(z.base.dirs) == 0 || len(z.new.dirs) == 0 {
			return fmt.Errorf("size %s needs a base and a new repository", z.label)
		}
		z.payloadDir = payloads
		for _, s := range []struct {
			side *houseSide
			bins []string
			name string
		}{{z.base, baseBins, "base"}, {z.new, newBins, "new"}} {
			s.side.bins, s.side.name = s.bins, s.name
			s.side.times = map[string][]houseSample{}
			for _, b := range s.bins {
				s.side.envs = append(s.side.envs, append(os.Environ(), "PATH="+b+":"+*helloBin+":"+path))
			}
			for _, d := range s.side.dirs {
				for i := range s.bins { // warm: the cache at the head in the side's own format, every copy of the binary paged in
					if _, err := houseRun(s.side.envs[i], d, "", filepath.Join(s.bins[i], "git-rally"), "room", "--json"); err != nil {
						return fmt.Errorf("%s warm-up: %w", d, err)
					}
				}
			}
		}
	}
	helloEnv := append(os.Environ(), "PATH="+*helloBin+":"+path)
	started := time.Now()
	for round := 0; round < *runs; round++ {
		for _, z := range sizes {
			for _, c := range houseCases {
				sides := []*houseSide{z.base, z.new}
				if round%2 == 1 {
					sides[0], sides[1] = sides[1], sides[0]
				}
				for _, s := range sides {
					t, err := z.run(s, c, round)
					if err != nil {
						return fmt.Errorf("%s %s round %d (%s): %w", z.label, c, round, s.name, err)
					}
					s.times[c] = append(s.times[c], t)
					if c == "gclaim" && s == z.new {
						z.newGclaim = append(z.newGclaim, t)
					}
					if round == 0 {
						fmt.Fprintf(os.Stderr, "rallybench house: round 1/%d %s %s %s: %.2f ms wall, %.2f ms CPU (%s elapsed)\n",
							*runs, z.label, c, s.name, t.wall, t.cpu, time.Since(started).Round(time.Second))
					}
				}
			}
			// The limit's appends run on the copy the new binary used
			// this round, as its git rally claim did (copies differ:
			// bench/README.md), and the base binary makes as many on its copy,
			// untimed, so that both sides' copies get the same appends.
			newDir, _, _ := z.new.pick(round)
			t, err := houseRun(helloEnv, newDir, "", "git", "hello")
			if err != nil {
				return fmt.Errorf("git hello: %w", err)
			}
			z.hello = append(z.hello, t)
			if t, err = z.inprocAppend(newDir, round); err != nil {
				return fmt.Errorf("%s in-process append: %w", z.label, err)
			}
			z.inproc = append(z.inproc, t)
			if t, err = z.coldAppend(helloEnv, newDir, round); err != nil {
				return fmt.Errorf("%s git rallyappend: %w", z.label, err)
			}
			z.cold = append(z.cold, t)
			balance := []string{"inproc", "cold"}
			if *slack > 0 {
				if err := z.underSlack(*slack, helloEnv, newDir, round); err != nil {
					return err
				}
				balance = append(balance, "slack-claim", "slack-cold")
			}
			for _, c := range balance {
				if _, err := z.run(z.base, "balance-"+c, round); err != nil {
					return fmt.Errorf("%s base %s: %w", z.label, c, err)
				}
			}
			z.rounds++
		}
		fmt.Fprintf(os.Stderr, "rallybench house: round %d/%d done (%s elapsed)\n", round+1, *runs, time.Since(started).Round(time.Second))
	}
	houseTable(sizes, baseBins[0], newBins[0], *server, *baseRev, *runs, *slack)
	return nil
}

// underSlack times, for information, the new binary's git rally claim,
// git hello and git rallyappend again, each started under a timer slack of
// slack (withTimerSlack), on dir, the copy of this round's limit.
func (z *houseSize) underSlack(slack time.Duration, helloEnv []string, dir string, round int) error {
	return withTimerSlack(slack, func() error {
		t, err := z.run(z.new, "gclaim-slack", round)
		if err != nil {
			return fmt.Errorf("%s git rally claim under a timer slack: %w", z.label, err)
		}
		z.slackGclaim = append(z.slackGclaim, t)
		if t, err = houseRun(helloEnv, dir, "", "git", "hello"); err != nil {
			return fmt.Errorf("git hello under a timer slack: %w", err)
		}
		z.slackHello = append(z.slackHello, t)
		if t, err = z.coldAppend(helloEnv, dir, round); err != nil {
			return fmt.Errorf("%s git rallyappend under a timer slack: %w", z.label, err)
		}
		z.slackCold = append(z.slackCold, t)
		return nil
	})
}

// run times one case with one side's binary on its copy for this round,
// and undoes (untimed) what it appended.
func (z *houseSize) run(s *houseSide, c string, round int) (houseSample, error) {
	dir, bindir, env := s.pick(round)
	bin := filepath.Join(bindir, "git-rally")
	file := fmt.Sprintf("src/house/%s-%d.go", c, round)
	switch c {
	case "claim", "gclaim", "gclaim-slack", "balance-inproc", "balance-cold", "balance-slack-claim", "balance-slack-cold":
		var t houseSample
		var err error
		if c != "gclaim" && c != "gclaim-slack" {
			t, err = houseRun(env, dir, "", bin, "claim", file, "--tool", "bench:house")
		} else {
			t, err = houseRun(env, dir, "", "git", "rally", "claim", file, "--tool", "bench:house")
		}
		if err != nil {
			return t, err
		}
		_, err = houseRun(env, dir, "", bin, "release", file, "--tool", "bench:house")
		return t, err
	case "check":
		return houseRun(env, dir, "", bin, "check", "before-write", file, "--tool", "bench:house")
	case "room":
		return houseRun(env, dir, "", bin, "room", "--json")
	case "version":
		return houseRun(env, dir, "", bin, "version")
	case "hook-claude", "hook-codex":
		// The hook claims the file it is about to let the host write; the
		// claim is released afterwards, untimed.
		var payload, host, tool string
		if c == "hook-claude" {
			host, tool = "claude", "bench:hookclaude"
			payload = fmt.Sprintf(`{"session_id":"house","hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":%q,"old_string":"a","new_string":"b"}}`, file)
		} else {
			host, tool = "codex", "bench:hookcodex"
			payload = fmt.Sprintf(`{"session_id":"019a2b3c-0000-7000-8000-00000000beef","turn_id":"3","hook_event_name":"PreToolUse","model":"gpt-5-codex","permission_mode":"default","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Update File: %s\n@@\n-a\n+b\n*** End Patch\n"},"tool_use_id":"call_house"}`, file)
		}
		in := filepath.Join(z.payloadDir, c+".json")
		if err := os.WriteFile(in, []byte(payload), 0o666); err != nil {
			return houseSample{}, err
		}
		env := append(append([]string{}, env...), "RALLY_TOOL="+tool)
		t, err := houseRun(env, dir, in, bin, "hook", host, "pre-tool-use")
		if err != nil {
			return t, err
		}
		_, err = houseRun(env, dir, "", bin, "release", file, "--tool", tool)
		return t, err
	}
	return houseSample{}, fmt.Errorf("unknown case %q", c)
}

// inprocAppend is the append without a process: ledger.Open + Append of
// one claim + Close in this (running) process;
// wall time and this process's CPU time (getrusage) around it. The claim
// is released afterwards, untimed. It runs on dir, the copy the new
// binary's git rally claim ran on in this round: what a file creation
// costs differs between copies (bench/README.md), and the ratio's two
// sides should meet the same one.
func (z *houseSize) inprocAppend(dir string, round int) (houseSample, error) {
	common := filepath.Join(dir, ".git")
	scope := fmt.Sprintf("file:src/house/inproc-%d.go", round)
	owner := facts.Owner{Tool: "bench:inproc"}
	var r0, r1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	t0 := time.Now()
	l, err := ledger.Open(common, nil)
	if err != nil {
		return houseSample{}, err
	}
	_, err = l.Append(facts.Claim(facts.ClaimRequest{Owner: owner, Scopes: []string{scope}}))
	l.Close()
	wall := time.Since(t0)
	syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
	if err != nil {
		return houseSample{}, err
	}
	cpu := time.Duration(r1.Utime.Nano() + r1.Stime.Nano() - r0.Utime.Nano() - r0.Stime.Nano())
	return houseSample{msf(wall), msf(cpu)}, releaseInProc(common, owner, scope)
}

// coldAppend is the in-process append in a process of its own: git
// rallyappend (bench/cmd/rallyappend, static, linking the ledger and
// nothing of the command line) on dir, the copy of the in-process append;
// released afterwards, untimed. It is not part of the bar: beside git rally claim it shows
// what git-rally adds to an append, beside git hello + the in-process
// append what a new process pays to append.
func (z *houseSize) coldAppend(env []string, dir string, round int) (houseSample, error) {
	file := fmt.Sprintf("src/house/cold-%d.go", round)
	owner := facts.Owner{Tool: "bench:cold"}
	t, err := houseRun(env, dir, "", "git", "rallyappend", file, owner.Tool)
	if err != nil {
		return t, err
	}
	return t, releaseInProc(filepath.Join(dir, ".git"), owner, "file:"+file)
}

// houseRun runs one process in dir (stdin from the file in, or none;
// stdout discarded; stderr kept for the error) and returns its wall time
// and its CPU time (user + system, wait4's rusage, which counts the
// children it waited for: git's wrapper and git-rally both).
func houseRun(env []string, dir, in, name string, args ...string) (houseSample, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	errf, err := os.CreateTemp("", "rallybench-stderr")
	if err != nil {
		return houseSample{}, err
	}
	defer os.Remove(errf.Name())
	defer errf.Close()
	cmd.Stderr = errf // a file, not a buffer: no copying goroutine beside the timed process
	if in != "" {
		f, err := os.Open(in)
		if err != nil {
			return houseSample{}, err
		}
		defer f.Close()
		cmd.Stdin = f
	}
	t0 := time.Now()
	err = cmd.Run()
	wall := time.Since(t0)
	if err != nil {
		b, _ := os.ReadFile(errf.Name())
		return houseSample{}, fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, b)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return houseSample{}, fmt.Errorf("no rusage")
	}
	return houseSample{msf(wall), msf(time.Duration(ru.Utime.Nano() + ru.Stime.Nano()))}, nil
}

func medianOf(v []float64) float64 { return median(append([]float64(nil), v...)) }

// pairRatio is the median over rounds of f(a[i]) / f(b[i]).
func pairRatio(a, b []houseSample, f func(houseSample) float64) float64 {
	var v []float64
	for i := range a {
		if i < len(b) && f(b[i]) > 0 {
			v = append(v, f(a[i])/f(b[i]))
		}
	}
	return median(v)
}

func wallOf(s houseSample) float64 { return s.wall }
func cpuOf(s houseSample) float64  { return s.cpu }

// houseFigures are the two figures every table row is printed for.
var houseFigures = []struct {
	name string
	f    func(houseSample) float64
}{{"cpu", cpuOf}, {"wall", wallOf}}

func medOf(ss []houseSample, f func(houseSample) float64) float64 {
	v := make([]float64, len(ss))
	for i, s := range ss {
		v[i] = f(s)
	}
	return medianOf(v)
}

// sumOf is f(a[i]) + f(b[i]) for every round.
func sumOf(a, b []houseSample, f func(houseSample) float64) []float64 {
	v := make([]float64, 0, len(a))
	for i := range a {
		if i < len(b) {
			v = append(v, f(a[i])+f(b[i]))
		}
	}
	return v
}

func houseTable(sizes []*houseSize, baseBin, newBin, server, baseRev string, runs int, slack time.Duration) {
	fmt.Printf("## Issue 27: speed (base %s against this tree; %d interleaved rounds; medians, ms; ratios are medians of per-round ratios)\n", baseRev, runs)
	fmt.Println("CPU is user + system from wait4 (the primary figure on a shared machine: it ignores time spent waiting for a core);")
	fmt.Println("wall is printed beside it. A verdict is given on each; the bar holds when the CPU verdict is ok.")
	fmt.Println()
	fmt.Printf("%-58s %-5s %8s %8s %7s %5s | %8s %8s %7s %5s\n", "hot command, new / base (bar ≤ 1.03)", "facts",
		"base cpu", "new cpu", "ratio", "", "base wall", "new wall", "ratio", "")
	fails := 0
	verdict := func(ok bool) string {
		if ok {
			return "ok"
		}
		return "FAIL"
	}
	for _, c := range houseCases {
		for _, z := range sizes {
			b, n := z.base.times[c], z.new.times[c]
			rc, rw := pairRatio(n, b, cpuOf), pairRatio(n, b, wallOf)
			if rc > barHouseBase {
				fails++
			}
			fmt.Printf("%-58s %-5s %8.2f %8.2f %6.3fx %5s | %8.2f %8.2f %6.3fx %5s\n", houseNames[c], z.label,
				medOf(b, cpuOf), medOf(n, cpuOf), rc, verdict(rc <= barHouseBase),
				medOf(b, wallOf), medOf(n, wallOf), rw, verdict(rw <= barHouseBase))
		}
	}
	fmt.Println()
	fmt.Printf("%-58s %-5s %8s %8s %8s %7s %5s\n", "physical limit (bar ≤ 1.2)", "facts", "claim", "git hello", "inproc", "ratio", "")
	for _, z := range sizes {
		for _, f := range houseFigures {
			var v []float64
			for i := range z.newGclaim {
				if s := f.f(z.hello[i]) + f.f(z.inproc[i]); s > 0 {
					v = append(v, f.f(z.newGclaim[i])/s)
				}
			}
			r := median(v)
			if f.name == "cpu" && r > barHouseLimit {
				fails++
			}
			fmt.Printf("%-58s %-5s %8.2f %8.2f %8.2f %6.3fx %5s\n", "claim / (git hello + inproc append), "+f.name, z.label,
				medOf(z.newGclaim, f.f), medOf(z.hello, f.f), medOf(z.inproc, f.f), r, verdict(r <= barHouseLimit))
		}
	}
	header := false
	for _, z := range sizes {
		if len(z.cold) == 0 {
			continue
		}
		if !header {
			header = true
			fmt.Println()
			fmt.Printf("%-58s %-5s %8s %8s %8s %8s %8s\n", "for information: the append in a process of its own", "facts", "claim", "cold", "limit", "claim/cold", "cold/limit")
		}
		for _, f := range houseFigures {
			var over, cold []float64
			for i := range z.newGclaim {
				if c := f.f(z.cold[i]); c > 0 {
					over = append(over, f.f(z.newGclaim[i])/c)
				}
				if s := f.f(z.hello[i]) + f.f(z.inproc[i]); s > 0 {
					cold = append(cold, f.f(z.cold[i])/s)
				}
			}
			fmt.Printf("%-58s %-5s %8.2f %8.2f %8.2f %9.3fx %9.3fx\n", "git rally claim, git rallyappend (cold), "+f.name, z.label,
				medOf(z.newGclaim, f.f), medOf(z.cold, f.f), median(sumOf(z.hello, z.inproc, f.f)), median(over), median(cold))
		}
	}
	header = false
	for _, z := range sizes {
		if len(z.slackGclaim) == 0 {
			continue
		}
		if !header {
			header = true
			fmt.Println()
			fmt.Printf("for information: sysmon's polls. git rally claim, git hello and git rallyappend again, each started under a timer slack\n")
			fmt.Printf("of %v (the default is 50µs), which its threads inherit: the Go runtime's sysmon sleeps 20 µs at a time for its\n", slack)
			fmt.Printf("first fifty rounds, and these sleeps now merge (bench/README.md, \"sysmon\"); the in-process append as above\n")
			fmt.Printf("%-58s %-5s %8s %8s %8s %7s %8s %8s\n", "", "facts", "claim", "git hello", "inproc", "ratio", "saved", "cold/limit")
		}
		for _, f := range houseFigures {
			var ratio, saved, cold []float64
			for i := range z.slackGclaim {
				if s := f.f(z.slackHello[i]) + f.f(z.inproc[i]); s > 0 {
					ratio = append(ratio, f.f(z.slackGclaim[i])/s)
					cold = append(cold, f.f(z.slackCold[i])/s)
				}
				saved = append(saved, f.f(z.newGclaim[i])-f.f(z.slackGclaim[i]))
			}
			fmt.Printf("%-58s %-5s %8.2f %8.2f %8.2f %6.3fx %8.2f %9.3fx\n", "under the slack: claim / (git hello + inproc), "+f.name, z.label,
				medOf(z.slackGclaim, f.f), medOf(z.slackHello, f.f), medOf(z.inproc, f.f), median(ratio), median(saved), median(cold))
		}
	}
	fmt.Println()
	size := func(p string) int64 {
		st, err := os.Stat(p)
		if err != nil {
			return -1
		}
		return st.Size()
	}
	hot := size(filepath.Join(newBin, "git-rally"))
	if hot > barHouseSize {
		fails++
	}
	fmt.Printf("hot binary git-rally (static): %d bytes = %.2f MB = %.2f MiB; bar 16 MB = 16,000,000 bytes (16 MiB = 16,777,216): %s\n",
		hot, float64(hot)/1e6, float64(hot)/(1<<20), verdict(hot > 0 && hot <= barHouseSize))
	if server != "" {
		s := size(server)
		fmt.Printf("server binary git-rally-server (static, for information): %d bytes = %.2f MB\n", s, float64(s)/1e6)
	}
	b := size(filepath.Join(baseBin, "git-rally"))
	fmt.Printf("base git-rally (static, one binary with the servers linked in, for information): %d bytes = %.2f MB\n", b, float64(b)/1e6)
	fmt.Println()
	if fails == 0 {
		fmt.Println("issue 27's speed bars: all met (CPU verdicts)")
	} else {
		fmt.Printf("issue 27's speed bars: %d not met (CPU verdicts)\n", fails)
	}
}
