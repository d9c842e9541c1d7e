package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// buildRally builds git-rally into a temporary directory.
func buildRally(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "git-rally")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/git-rally/git-rally/cmd/git-rally")
	cmd.Env = append(cmd.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func needDaemon(t *testing.T) {
	t.Helper()
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Skip("no git")
	}
	if _, err := exec.LookPath(filepath.Join(string(out[:len(out)-1]), "git-daemon")); err != nil {
		t.Skip("git daemon is not installed")
	}
}

// Fifty clones append and sync at once through one git daemon on
// loopback, three rounds: every acknowledged fact reaches every clone
// and the origin, no sync fails (none gives up), and all end at one head
// (issue 31). The sync times are logged against one clone alone; no time
// is asserted. It runs with RALLY_FIFTY_CLONES=1 (minutes on two cores),
// as a step of its own in .ci/run. Under load some syncs take over 2
// minutes while others land (p99 138 s at load 10-30): sync bounds only
// the time the remote stands still (docs/sync.md), and retries a push
// whose connection the daemon reset (bench/README.md).
func TestFiftyClonesConverge(t *testing.T) {
	if testing.Short() || os.Getenv("RALLY_FIFTY_CLONES") != "1" {
		t.Skip("fifty clones syncing: RALLY_FIFTY_CLONES=1 (minutes on two cores)")
	}
	needDaemon(t)
	r, err := clones(clonesConfig{bin: buildRally(t), dir: t.TempDir(), clones: 50, rounds: 3, alone: 10})
	if err != nil {
		t.Fatal(err)
	}
	a, s := sortedDurations(r.alone), sortedDurations(r.together)
	t.Logf("alone: %d syncs, median %s p99 %s; fifty at once: %d syncs, median %s p99 %s; %d facts, %d passes",
		len(a), msStr(pct(a, 50)), msStr(pct(a, 99)), len(s), msStr(pct(s, 50)), msStr(pct(s, 99)), r.acked, r.passes)
	if want := 10 + 50*3; r.acked != want {
		t.Errorf("%d facts acknowledged, want %d", r.acked, want)
	}
	for _, f := range r.failed {
		t.Errorf("sync failed: %s", f)
	}
	if len(r.lost) > 0 {
		t.Errorf("%d acknowledged facts missing at the end, e.g. %s", len(r.lost), r.lost[0])
	}
	if r.heads != 1 {
		t.Errorf("%d ledger heads at the end, want 1", r.heads)
	}
}

// The check can fail: with --no-push on every sync, the clones' facts
// never reach the origin, and every one but the first clone's initial
// note is reported missing there.
func TestClonesReportLostFacts(t *testing.T) {
	if testing.Short() {
		t.Skip("clones syncing")
	}
	needDaemon(t)
	r, err := clones(clonesConfig{bin: buildRally(t), dir: t.TempDir(), clones: 3, rounds: 1, alone: 1, syncArgs: []string{"--no-push"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.failed) > 0 {
		t.Fatalf("syncs failed: %v", r.failed)
	}
	// 4 facts acknowledged (c00 alone, then one by each), none pushed:
	// missing at the origin (4), at c00 (the other two) and at c01 and
	// c02 (all but their own: 3 each).
	if len(r.lost) != 4+2+3+3 {
		t.Fatalf("%d lost reported, want 12: %v", len(r.lost), r.lost)
	}
	if r.heads == 1 {
		t.Fatalf("clones that never push ended at one head")
	}
}
