package testscripts

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// Ten clones sync to one bare remote at once, again and again, appending
// between syncs: every sync exits 0, every acknowledged fact reaches the
// remote, and after a final round every clone computes the same room.
// It runs for 20 s (8 s under -short); the figures are logged.
func TestSyncContention(t *testing.T) {
	const clones = 10
	span := 20 * time.Second
	if testing.Short() {
		span = 8 * time.Second
	}
	root := t.TempDir()
	remote := filepath.Join(root, "remote.git")
	gitT(t, root, "init", "-q", "--bare", remote)
	// One fixed time for every process: the rooms compare whole.
	env := []string{"RALLY_NOW=2026-03-01T10:00:00Z"}
	dirs := make([]string, clones)
	for i := range dirs {
		dirs[i] = filepath.Join(root, fmt.Sprintf("c%d", i))
		gitT(t, root, "init", "-q", "-b", "main", dirs[i])
		gitT(t, dirs[i], "remote", "add", "origin", remote)
		if r := run(dirs[i], env, "init", "--remote", "origin"); r.code != 0 {
			t.Fatalf("init: exit %d: %s", r.code, r.stderr)
		}
	}

	type figures struct {
		syncs, rounds, maxRounds, failed int
		slowest                          time.Duration
	}
	var (
		mu    sync.Mutex
		fig   figures
		acked []string
		wg    sync.WaitGroup
	)
	deadline := time.Now().Add(span)
	for i, dir := range dirs {
		wg.Add(1)
		go func(i int, dir string) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(i)))
			tool := fmt.Sprintf("t:c%d", i)
			for it := 0; time.Now().Before(deadline); it++ {
				for n := rng.Intn(3); n >= 0; n-- {
					args := []string{"note", "--tool", tool, "--subject", fmt.Sprintf("c%d it%d n%d", i, it, n)}
					if n == 0 && it%3 == 0 {
						// Each clone claims files of its own: the room has
						// claims, none of them contested.
						args = []string{"claim", fmt.Sprintf("src/c%d/f%d.go", i, it), "--tool", tool}
					}
					r := run(dir, env, args...)
					if r.code != 0 {
						t.Errorf("c%d: %s: exit %d: %s", i, args[0], r.code, r.stderr)
						return
					}
					mu.Lock()
					acked = append(acked, firstField(r.stdout))
					mu.Unlock()
				}
				began := time.Now()
				r := run(dir, env, "sync", "--json")
				took := time.Since(began)
				var out struct {
					Rounds int  `json:"rounds"`
					Pushed bool `json:"pushed"`
				}
				json.Unmarshal([]byte(r.stdout), &out)
				mu.Lock()
				fig.syncs++
				fig.rounds += out.Rounds
				fig.maxRounds = max(fig.maxRounds, out.Rounds)
				fig.slowest = max(fig.slowest, took)
				if r.code != 0 {
					fig.failed++
				}
				mu.Unlock()
				if r.code != 0 {
					t.Errorf("c%d: sync: exit %d: %s", i, r.code, strings.TrimSpace(r.stderr))
				}
			}
		}(i, dir)
	}
	wg.Wait()
	t.Logf("%d clones, %s: %d syncs (%d failed), %d rounds, at most %d in one sync, the slowest %s, %d facts acknowledged",
		clones, span, fig.syncs, fig.failed, fig.rounds, fig.maxRounds, fig.slowest.Round(time.Millisecond), len(acked))

	// The final round: the last clone ends with the union and pushes it;
	// the second pass brings everyone to it.
	for pass := 0; pass < 2; pass++ {
		for i, dir := range dirs {
			if r := run(dir, env, "sync"); r.code != 0 {
				t.Fatalf("final sync of c%d: exit %d: %s", i, r.code, r.stderr)
			}
		}
	}
	onRemote := ledgerIDs(t, remote)
	lost := 0
	for _, id := range acked {
		if !onRemote[id] {
			lost++
			t.Errorf("acknowledged fact %s is not on the remote", id)
		}
	}
	t.Logf("remote holds %d facts; %d of %d acknowledged are missing", len(onRemote), lost, len(acked))

	wantIDs := sortedKeys(ledgerIDs(t, dirs[0]))
	wantRoom := roomOf(t, dirs[0], env)
	for i, dir := range dirs[1:] {
		if got := sortedKeys(ledgerIDs(t, dir)); strings.Join(got, " ") != strings.Join(wantIDs, " ") {
			t.Errorf("c%d holds %d facts, c0 holds %d", i+1, len(got), len(wantIDs))
		}
		if got := roomOf(t, dir, env); got != wantRoom {
			t.Errorf("c%d computes another room than c0:\n%s\n%s", i+1, got, wantRoom)
		}
	}
	if len(wantIDs) != len(onRemote) {
		t.Errorf("the clones hold %d facts, the remote %d", len(wantIDs), len(onRemote))
	}
}

// ledgerIDs reads the fact ids from the ledger's tree with git itself (the
// blob names), not through rally.
func ledgerIDs(t *testing.T, dir string) map[string]bool {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "ls-tree", "-r", "--name-only", "refs/rally/ledger").Output()
	if err != nil {
		t.Fatalf("ls-tree in %s: %v", dir, err)
	}
	ids := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		if base := filepath.Base(p); strings.HasPrefix(base, "f_") {
			ids[strings.TrimSuffix(base, ".json")] = true
		}
	}
	return ids
}

func roomOf(t *testing.T, dir string, env []string) string {
	t.Helper()
	r := run(dir, env, "room", "--json")
	if r.code != 0 {
		t.Fatalf("room in %s: exit %d: %s", dir, r.code, r.stderr)
	}
	return r.stdout
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
