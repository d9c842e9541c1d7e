package testscripts

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// 8 processes take one task of a plan at once: exactly one wins, every
// other is refused with exit 3, and the ledger holds one claim. The check
// runs inside the ledger's append, against the tip the commit extends.
func TestPlanTakeRace(t *testing.T) {
	plan := `{"id": "race", "tasks": [
  {"id": "api", "owns": ["dir:src/api"], "check": "true"},
  {"id": "ui", "owns": ["dir:src/ui"], "check": "true"}]}`
	for trial := 0; trial < 3; trial++ {
		dir := newRepo(t)
		file := filepath.Join(dir, "plan.json")
		if err := os.WriteFile(file, []byte(plan), 0o666); err != nil {
			t.Fatal(err)
		}
		rally(t, dir, "plan", "start", file, "--tool", "lead")
		const n = 8
		codes := make([]int, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				<-start
				r := run(dir, nil, "plan", "take", "race/api", "--tool", fmt.Sprintf("agent:%d", i))
				codes[i] = r.code
				if r.code == 3 && !strings.Contains(r.stderr, "task race/api is taken by agent:") {
					t.Errorf("refusal without the taker: %s", r.stderr)
				}
			}(i)
		}
		close(start)
		wg.Wait()
		wins, refused := 0, 0
		for _, c := range codes {
			switch c {
			case 0:
				wins++
			case 3:
				refused++
			default:
				t.Errorf("unexpected exit %d", c)
			}
		}
		if wins != 1 || refused != n-1 {
			t.Fatalf("trial %d: %d winners and %d refused, want 1 and %d (codes %v)", trial, wins, refused, n-1, codes)
		}
		if got := strings.TrimSpace(rally(t, dir, "room", "--query", "claims.#")); got != "1" {
			t.Fatalf("room holds %s claims, want 1", got)
		}
		if got := strings.TrimSpace(rally(t, dir, "plan", "status", "--query", "tasks.#.state|@ugly")); got != `["taken","ready"]` {
			t.Fatalf("task states %s, want taken and ready", got)
		}
	}
}
