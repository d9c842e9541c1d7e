package main

import (
	"flag"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"time"
)

// runSignAB times N pairs of whole-process claims on one repository, one
// unsigned and one signed (rally.sign with a throw-away ed25519 key file),
// in alternating order, each released afterwards (untimed). It prints the
// medians of wall time and of the processes' own CPU time (user + system,
// which a loaded machine disturbs far less than wall time) and the ratios.
//
//	rallybench signab -dir REPO [-bin git-rally] [-runs 200]
func runSignAB(args []string) error {
	fl := flag.NewFlagSet("signab", flag.ExitOnError)
	dir := fl.String("dir", "", "repository with a rally ledger")
	bin := fl.String("bin", "git-rally", "the git-rally binary")
	runs := fl.Int("runs", 200, "pairs")
	fl.Parse(args)
	if *dir == "" {
		return fmt.Errorf("signab needs -dir")
	}
	key, err := writeSigningKey(filepath.Join(*dir, ".git", "rally", "bench-signing-key"))
	if err != nil {
		return err
	}
	env := func(sign bool) []string {
		return []string{"GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=rally.sign", fmt.Sprintf("GIT_CONFIG_VALUE_0=%v", sign),
			"GIT_CONFIG_KEY_1=user.signingKey", "GIT_CONFIG_VALUE_1=" + key, "RALLY_AUTOPACK=0"}
	}
	run := func(sign bool, args ...string) (wall, cpu time.Duration, err error) {
		cmd := exec.Command(*bin, args...)
		cmd.Dir = *dir
		cmd.Env = append(cmd.Environ(), env(sign)...)
		t := time.Now()
		out, err := cmd.CombinedOutput()
		wall = time.Since(t)
		if err != nil {
			return 0, 0, fmt.Errorf("%v: %v: %s", args, err, out)
		}
		return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
	}
	var wall, cpu [2][]time.Duration
	for r := 0; r < *runs; r++ {
		order := []bool{false, true}
		if r%2 == 1 {
			order = []bool{true, false}
		}
		for _, sign := range order {
			p := fmt.Sprintf("src/signab/%d-%v.go", r, sign)
			w, c, err := run(sign, "claim", p, "--tool", "bench:signab")
			if err != nil {
				return err
			}
			i := map[bool]int{false: 0, true: 1}[sign]
			wall[i], cpu[i] = append(wall[i], w), append(cpu[i], c)
			if _, _, err := run(false, "release", p, "--tool", "bench:signab"); err != nil {
				return err
			}
		}
	}
	med := func(d []time.Duration) time.Duration {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return d[len(d)/2]
	}
	wu, ws, cu, cs := med(wall[0]), med(wall[1]), med(cpu[0]), med(cpu[1])
	fmt.Printf("%d alternating pairs of git-rally claim (whole process), medians:\n", *runs)
	fmt.Printf("  wall  unsigned %s  signed %s  = %.3fx\n", msStr(wu), msStr(ws), float64(ws)/float64(wu))
	fmt.Printf("  cpu   unsigned %s  signed %s  = %.3fx (user+sys of the process)\n", msStr(cu), msStr(cs), float64(cs)/float64(cu))
	return nil
}
