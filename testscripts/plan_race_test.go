package testscripts

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
		race(t, dir, 8, trial, "task race/api is taken by agent:", func(i int) []string {
			return []string{"plan", "take", "race/api", "--tool", fmt.Sprintf("agent:%d", i)}
		})
		if got := strings.TrimSpace(rally(t, dir, "plan", "status", "--query", "tasks.#.state|@ugly")); got != `["taken","ready"]` {
			t.Fatalf("task states %s, want taken and ready", got)
		}
	}
}
