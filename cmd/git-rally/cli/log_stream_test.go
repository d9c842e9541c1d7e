package cli

import (
	"bytes"
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/ledger"
)

// logLedger makes a repository whose ledger holds n facts (notes,
// claims and handoffs of a few tools, some with text JSON escapes and
// HTML characters), appended 400 at a time, and changes into it.
func logLedger(t *testing.T, n int) *ledger.Ledger {
	t.Helper()
	sessionEnv(t)
	dir := chdirNewRepo(t)
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	l, err := ledger.Open(filepath.Join(dir, ".git"), func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	tools := []string{"codex:a", "claude:b", "gemini:c"}
	for done := 0; done < n; {
		k := min(400, n-done)
		base := done
		if _, err := l.Append(func(st *facts.State, _ time.Time) ([]*facts.Fact, error) {
			var fs []*facts.Fact
			for i := 0; i < k; i++ {
				j := base + i
				f := &facts.Fact{Kind: facts.KindNote, Tool: tools[j%3], Subject: fmt.Sprintf("note %d <b>&amp; \u00e9 \u2028 \"q\"", j)}
				switch j % 7 {
				case 1:
					f = &facts.Fact{Kind: facts.KindClaim, Tool: tools[j%3], Scopes: []string{fmt.Sprintf("file:src/f%d.go", j)}, Access: facts.Exclusive, LeaseS: 1800}
				case 2:
					f = &facts.Fact{Kind: facts.KindHandoff, Tool: tools[j%3], Target: tools[(j+1)%3], Subject: "take <this>"}
				}
				fs = append(fs, f)
			}
			return fs, nil
		}); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Minute)
		done += k
	}
	return l
}

// The whole log as JSON is streamed, and byte for byte what printing
// every fact at once writes; so are --kind and --tool, and none.
func TestLogJSONStreamedIsPrintJSON(t *testing.T) {
	l := logLedger(t, 900)
	for _, c := range []struct{ kind, tool string }{{"", ""}, {"handoff", ""}, {"", "claude:b"}, {"claim", "codex:a"}, {"decision", ""}} {
		all, err := l.All()
		if err != nil {
			t.Fatal(err)
		}
		var sel []*facts.Fact
		for _, f := range all {
			if (c.kind == "" || f.Kind == c.kind) && (c.tool == "" || f.Tool == c.tool) {
				sel = append(sel, f)
			}
		}
		want, err := cmdutil.IndentedJSON(factsWithVerdicts(nil, sel))
		if err != nil {
			t.Fatal(err)
		}
		args := []string{"log", "--json"}
		if c.kind != "" {
			args = append(args, "--kind", c.kind)
		}
		if c.tool != "" {
			args = append(args, "--tool", c.tool)
		}
		var o, e bytes.Buffer
		if code := Run(args, strings.NewReader(""), &o, &e); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, e.String())
		}
		if o.String() != want.String() {
			t.Fatalf("%v: streamed output (%d bytes) is not PrintJSON's (%d bytes)\n%.300s\nwant\n%.300s", args, o.Len(), want.Len(), o.String(), want.String())
		}
		if len(sel) == 0 && o.String() != "[]\n" {
			t.Fatalf("%v: %q, want []", args, o.String())
		}
	}
}

// heapSampler is an output that notes the live heap (after a
// collection) at every write: what the command holds while it prints.
type heapSampler struct {
	peak   uint64
	n, at  int64
	writes int
}

func (h *heapSampler) Write(p []byte) (int, error) {
	h.n += int64(len(p))
	h.writes++
	// Every 16 KB of output (a write of the held output is sampled too).
	if h.n-h.at >= 16<<10 || h.writes == 1 {
		h.at = h.n
		h.sample()
	}
	return len(p), nil
}

func (h *heapSampler) sample() {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	h.peak = max(h.peak, m.HeapAlloc)
}

// `log` and `log --json` over the whole history hold no fact: the live
// heap while they print grows by a few bytes a fact, not by the facts
// (counted, not timed). Holding every fact and its JSON was over 1.5 KB
// a fact, and 2.2 GB at a million facts.
func TestLogHoldsNoFactPerFact(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	for _, args := range [][]string{{"log", "--json"}, {"--no-pager", "log"}} {
		peak := func(n int) (uint64, int64) {
			logLedger(t, n)
			var e bytes.Buffer
			if code := Run([]string{"room"}, strings.NewReader(""), new(bytes.Buffer), &e); code != 0 { // builds the cache
				t.Fatalf("room: exit %d: %s", code, e.String())
			}
			h := &heapSampler{}
			h.sample()
			before := h.peak
			if code := Run(args, strings.NewReader(""), h, &e); code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, e.String())
			}
			return h.peak - before, h.n
		}
		p1, o1 := peak(1000)
		p2, o2 := peak(4000)
		per := (float64(p2) - float64(p1)) / 3000
		t.Logf("%v: live heap grew while printing %d bytes by %d, %d bytes by %d: %.0f bytes a fact", args, o1, p1, o2, p2, per)
		if per > 100 {
			t.Errorf("%v holds %.0f bytes a fact while it prints, want at most 100", args, per)
		}
	}
}

// `watch --since <id>` reads the facts after the one it names, not the
// history: what it allocates does not grow with the facts before it
// (counted, not timed). Reading every fact to pick those after it was
// 1 GB at a million facts.
func TestWatchSinceAllocatesFlatInHistory(t *testing.T) {
	alloc := func(n int) float64 {
		l := logLedger(t, n)
		tail, err := l.Tail(6, nil)
		if err != nil {
			t.Fatal(err)
		}
		var e bytes.Buffer
		if code := Run([]string{"room"}, strings.NewReader(""), new(bytes.Buffer), &e); code != 0 {
			t.Fatalf("room: exit %d: %s", code, e.String())
		}
		var a, b runtime.MemStats
		var o bytes.Buffer
		runtime.GC()
		runtime.ReadMemStats(&a)
		code := Run([]string{"watch", "--once", "--json", "--since", tail[0].ID, "--timeout", "30s"}, strings.NewReader(""), &o, &e)
		runtime.ReadMemStats(&b)
		if code != 0 || strings.Count(o.String(), "\n") != 5 {
			t.Fatalf("watch --since: exit %d, %d lines, want 5: %s", code, strings.Count(o.String(), "\n"), e.String())
		}
		return float64(b.TotalAlloc - a.TotalAlloc)
	}
	a1, a2 := alloc(1000), alloc(4000)
	per := (a2 - a1) / 3000
	t.Logf("watch --since the 5th last fact: %.0f bytes at 1000 facts, %.0f at 4000: %.1f bytes a fact", a1, a2, per)
	if per > 64 {
		t.Fatalf("watch --since allocates %.1f bytes a fact of history, want at most 64", per)
	}
}
