package cli

import (
	"slices"
	"testing"
)

// A managed session gets the caller's environment, less what tmux sets
// for the pane and git's variables that pin a repository elsewhere.
func TestPassEnvIsTheCallersLessPlaceBound(t *testing.T) {
	t.Setenv("RALLY_TEST_API_KEY", "sk-123")
	t.Setenv("GIT_DIR", "/elsewhere/.git")
	t.Setenv("GIT_INDEX_FILE", "/elsewhere/index")
	t.Setenv("TMUX", "/tmp/tmux-0/default,1,0")
	got := passEnv()
	if !slices.Contains(got, "RALLY_TEST_API_KEY=sk-123") {
		t.Errorf("the caller's variable is missing: %v", got)
	}
	for _, kv := range got {
		for _, bad := range []string{"GIT_DIR=", "GIT_INDEX_FILE=", "TMUX="} {
			if len(kv) >= len(bad) && kv[:len(bad)] == bad {
				t.Errorf("passed on %s", kv)
			}
		}
	}
}
