package ledger

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The fetch and the push of a sync run git in pack windows: the fetch's
// connectivity check (rev-list --objects of the new commits, --not every
// ref) marks the whole tree of the ledger head this clone had, which with
// git's defaults mapped most of the pack (at a million facts 236 MiB of
// RSS, 132 MiB in windows). Seen through git's own trace: the rev-list
// of the fetch, and the push, read core.packedGitLimit as 48m.
func TestSyncGitRunsInPackWindows(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	_, cs := network(t, 2, &now)
	a, b := cs[0], cs[1]
	a.note(t, "first")
	a.sync(t, true)
	b.note(t, "second")
	trace := filepath.Join(t.TempDir(), "trace2.json")
	t.Setenv("GIT_TRACE2_EVENT", trace)
	t.Setenv("GIT_TRACE2_CONFIG_PARAMS", "core.packedgitlimit")
	b.sync(t, true)
	f, err := os.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	argv := map[string][]string{} // sid: argv
	limit := map[string]string{}  // sid: core.packedgitlimit
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e struct {
			Event, Sid, Param, Value string
			Argv                     []string
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		switch e.Event {
		case "start":
			argv[e.Sid] = e.Argv
		case "def_param":
			if e.Param == "core.packedgitlimit" {
				limit[e.Sid] = e.Value
			}
		}
	}
	// rally's fetch and push, and the fetch's own rev-list (a child of the
	// fetch: the remote's processes, on this machine too, are not ours).
	seen := map[string]bool{}
	for sid, av := range argv {
		cmd := ""
		switch {
		case slices.Contains(av, "fetch") || slices.Contains(av, "push"):
			cmd = "fetch or push"
		case slices.Contains(av, "rev-list") && slices.Contains(argv[sid[:max(strings.LastIndexByte(sid, '/'), 0)]], "fetch"):
			cmd = "the fetch's rev-list"
		default:
			continue
		}
		seen[cmd] = true
		if limit[sid] != "48m" {
			t.Errorf("git %v ran with core.packedGitLimit %q, want 48m", av, limit[sid])
		}
	}
	if !seen["fetch or push"] || !seen["the fetch's rev-list"] {
		t.Fatalf("the trace shows no fetch's connectivity check or no push: %v", seen)
	}
}
