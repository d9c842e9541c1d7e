package testscripts

import (
	"encoding/json"
	"fmt"
	"testing"
)

// A crowded room: 40 agents, 40 claims, 15 handoffs. The compact room for
// one caller fits its budget, keeps every handoff to the caller and every
// claim on the requested path, and is at least 80% smaller than the full
// room.
func TestCompactRoomCrowded(t *testing.T) {
	dir := newRepo(t)
	env := []string{"RALLY_NOW=2026-03-01T10:00:00Z"}
	must := func(args ...string) {
		t.Helper()
		if r := run(dir, env, args...); r.code != 0 {
			t.Fatalf("%v: exit %d %s", args, r.code, r.stderr)
		}
	}
	for i := 0; i < 40; i++ {
		tool := fmt.Sprintf("agent:%02d", i)
		must("claim", fmt.Sprintf("src/module%02d/", i), "--tool", tool,
			"--subject", fmt.Sprintf("refactoring module %d into smaller pieces, with tests and docs", i))
	}
	for i := 0; i < 15; i++ {
		target := fmt.Sprintf("agent:%02d", 10+i)
		if i < 3 {
			target = "me:1"
		}
		must("handoff", "--tool", fmt.Sprintf("agent:%02d", i), "--target", target,
			"--subject", fmt.Sprintf("please review change %d of the storage layer before merging", i))
	}
	full := run(dir, env, "room", "--json")
	compact := run(dir, env, "room", "--compact", "--tool", "me:1", "--path", "src/module07/x.go", "--json")
	if full.code != 0 || compact.code != 0 {
		t.Fatalf("room: %s %s", full.stderr, compact.stderr)
	}
	var c struct {
		Claims []struct {
			Scopes []string `json:"scopes"`
		} `json:"claims"`
		Handoffs []struct {
			Target string `json:"target"`
		} `json:"handoffs"`
		Peers   []any          `json:"peers"`
		Omitted map[string]int `json:"omitted"`
		Budget  struct {
			Bytes, EmittedBytes int
			OverBudget          bool `json:"over_budget"`
		} `json:"budget"`
	}
	if err := json.Unmarshal([]byte(compact.stdout), &c); err != nil {
		t.Fatal(err)
	}
	compactBytes, fullBytes := compactLen(t, compact.stdout), compactLen(t, full.stdout)
	t.Logf("full room %d bytes, compact %d bytes: %.1f%% smaller", fullBytes, compactBytes, 100*(1-float64(compactBytes)/float64(fullBytes)))
	if compactBytes > 6000 {
		t.Errorf("compact room is %d bytes, over the 6000 budget", compactBytes)
	}
	if float64(compactBytes) > 0.2*float64(fullBytes) {
		t.Errorf("compact room %d bytes is not 80%% smaller than the full room's %d", compactBytes, fullBytes)
	}
	if len(c.Handoffs) != 3 {
		t.Errorf("compact room keeps %d handoffs to the caller, want 3", len(c.Handoffs))
	}
	found := false
	for _, cl := range c.Claims {
		for _, s := range cl.Scopes {
			if s == "dir:src/module07" {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("the claim on the requested path was cut")
	}
	if len(c.Peers) > 8 {
		t.Errorf("%d peers, at most 8", len(c.Peers))
	}
	if c.Omitted["claims"] == 0 || c.Omitted["peers"] == 0 {
		t.Errorf("nothing counted as omitted: %v", c.Omitted)
	}
	// A tiny budget still never cuts what the caller must act on.
	tiny := run(dir, env, "room", "--compact", "--tool", "me:1", "--path", "src/module07/x.go", "--budget-bytes", "300", "--json")
	var ct struct {
		Handoffs []any `json:"handoffs"`
		Claims   []any `json:"claims"`
		Budget   struct {
			OverBudget bool `json:"over_budget"`
		} `json:"budget"`
	}
	json.Unmarshal([]byte(tiny.stdout), &ct)
	if len(ct.Handoffs) != 3 || len(ct.Claims) != 1 || !ct.Budget.OverBudget {
		t.Errorf("tiny budget: %d handoffs, %d claims, over_budget %v; want 3, 1, true", len(ct.Handoffs), len(ct.Claims), ct.Budget.OverBudget)
	}
}

func compactLen(t *testing.T, s string) int {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	return len(b)
}
