package hooks

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/ledger"
	"github.com/git-rally/git-rally/refs"
)

// The benchmark ledger: 10,000 facts from 40 other agents (presence,
// notes, claims and releases), the caller's claims among them.
const (
	benchFacts  = 10000
	benchOthers = 40
	benchCaller = "claude_code:benchme1"
)

var benchT0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// BenchmarkPreToolUseProcess runs `git rally hook claude pre-tool-use` as a
// whole process, the way Claude Code runs it, for an Edit of a file the
// caller already holds, on a ledger of 10,000 facts: once for a caller
// holding 1 claim and once for a caller holding 30. It reports p50 and p95
// of each and their ratio (the hook must not grow with the claims held),
// and checks that no run wrote anything (no renewal facts).
//
//	go test ./hooks -run '^$' -bench PreToolUseProcess -benchtime 200x
func BenchmarkPreToolUseProcess(b *testing.B) {
	bin := buildRally(b)
	type setup struct {
		claims int
		repo   string
		head   refs.Hash
		times  []time.Duration
	}
	setups := []*setup{{claims: 1}, {claims: 30}}
	for _, s := range setups {
		s.repo, s.head = benchRepo(b, s.claims)
	}
	payload := func(repo string) []byte {
		return []byte(fmt.Sprintf(`{"session_id":"benchme1-0000-4000-8000-000000000000","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":%q,"old_string":"a","new_string":"b"}}`,
			repo, filepath.Join(repo, "src", "me", "file0.go")))
	}
	run := func(s *setup) time.Duration {
		cmd := exec.Command(bin, "hook", "claude", "pre-tool-use")
		cmd.Dir = s.repo
		cmd.Env = benchEnv()
		cmd.Stdin = bytes.NewReader(payload(s.repo))
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		start := time.Now()
		err := cmd.Run()
		d := time.Since(start)
		if err != nil || out.Len() > 0 || errb.Len() > 0 {
			b.Fatalf("hook: %v\nstdout: %s\nstderr: %s", err, out.Bytes(), errb.Bytes())
		}
		return d
	}
	for _, s := range setups {
		run(s) // warm the projection cache and the page cache
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range setups {
			s := setups[(i+j)%len(setups)]
			s.times = append(s.times, run(s))
		}
	}
	b.StopTimer()
	for _, s := range setups {
		l, err := ledger.Open(filepath.Join(s.repo, ".git"), nil)
		if err != nil {
			b.Fatal(err)
		}
		head, _ := l.Head()
		l.Close()
		if head != s.head {
			b.Fatalf("%d claims: the hook wrote to the ledger", s.claims)
		}
	}
	p := func(ts []time.Duration, q float64) float64 {
		sorted := append([]time.Duration(nil), ts...)
		sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
		return float64(sorted[int(q*float64(len(sorted)-1))].Microseconds()) / 1000
	}
	one, thirty := setups[0].times, setups[1].times
	b.ReportMetric(p(one, 0.5), "p50-ms-1claim")
	b.ReportMetric(p(one, 0.95), "p95-ms-1claim")
	b.ReportMetric(p(thirty, 0.5), "p50-ms-30claims")
	b.ReportMetric(p(thirty, 0.95), "p95-ms-30claims")
	b.ReportMetric(p(thirty, 0.5)/p(one, 0.5), "ratio-p50-30/1")
	b.ReportMetric(0, "ns/op")
	if b.N < 10 {
		return // the calibration run
	}
	fmt.Printf("pre-tool-use hook, %d facts, %d runs each: 1 claim p50 %.1f ms p95 %.1f ms; 30 claims p50 %.1f ms p95 %.1f ms; ratio 30/1 p50 %.2fx p95 %.2fx\n",
		benchFacts, len(one), p(one, 0.5), p(one, 0.95), p(thirty, 0.5), p(thirty, 0.95),
		p(thirty, 0.5)/p(one, 0.5), p(thirty, 0.95)/p(one, 0.95))
}

// buildRally builds the git-rally binary the hosts would run.
func buildRally(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "git-rally")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/git-rally/git-rally/cmd/git-rally")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func benchEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RALLY_") && !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	return append(env, "RALLY_NOW="+benchT0.Add(time.Minute).Format(time.RFC3339), "RALLY_AUTOPACK=0")
}

// benchRepo makes a repository whose ledger holds benchFacts facts, the
// caller's claims (of single files) among them, written in-process in
// batches of 200 per commit.
func benchRepo(b *testing.B, claims int) (string, refs.Hash) {
	b.Helper()
	dir := b.TempDir()
	if _, err := refs.Git(dir, nil, "init", "-q", "repo"); err != nil {
		b.Fatal(err)
	}
	repo := filepath.Join(dir, "repo")
	l, err := ledger.Open(filepath.Join(repo, ".git"), func() time.Time { return benchT0 })
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	var all []*facts.Fact
	for i := 0; i < benchOthers; i++ {
		tool := fmt.Sprintf("agent%02d:x", i)
		all = append(all, &facts.Fact{Kind: facts.KindPresence, Tool: tool, Subject: "working"})
		if i%2 == 0 { // half the others hold a claim each
			all = append(all, &facts.Fact{Kind: facts.KindClaim, Tool: tool, Scopes: []string{fmt.Sprintf("dir:pkg/%02d", i)}, Access: facts.Exclusive, LeaseS: 7200})
		}
	}
	for i := 0; i < claims; i++ {
		all = append(all, &facts.Fact{Kind: facts.KindClaim, Tool: benchCaller, Scopes: []string{fmt.Sprintf("file:src/me/file%d.go", i)}, Access: facts.Exclusive, LeaseS: 1800})
	}
	for i := 0; len(all) < benchFacts; i++ {
		tool := fmt.Sprintf("agent%02d:x", i%benchOthers)
		switch i % 4 {
		case 0:
			all = append(all, &facts.Fact{Kind: facts.KindNote, Tool: tool, Subject: fmt.Sprintf("note %d about the build", i)})
		case 1:
			all = append(all, &facts.Fact{Kind: facts.KindClaim, Tool: tool, Scopes: []string{fmt.Sprintf("file:tmp/%d.go", i)}, Access: facts.Exclusive})
		case 2: // the previous agent releases what it claimed
			prev := fmt.Sprintf("agent%02d:x", (i-1)%benchOthers)
			all = append(all, &facts.Fact{Kind: facts.KindRelease, Tool: prev, Scopes: []string{fmt.Sprintf("file:tmp/%d.go", i-1)}})
		default:
			all = append(all, &facts.Fact{Kind: facts.KindPresence, Tool: tool, Subject: "still here"})
		}
	}
	// The caller's latest fact is recent, so the hook has no reason to write.
	all = append(all[:benchFacts-1], &facts.Fact{Kind: facts.KindPresence, Tool: benchCaller, Subject: "editing"})
	for len(all) > 0 {
		n := min(200, len(all))
		batch := all[:n]
		all = all[n:]
		if _, err := l.Append(func(*facts.State, time.Time) ([]*facts.Fact, error) { return batch, nil }); err != nil {
			b.Fatal(err)
		}
	}
	st, err := l.Read()
	if err != nil {
		b.Fatal(err)
	}
	if st.Facts != benchFacts || len(st.OwnedClaims(facts.Owner{Tool: benchCaller})) != claims || st.Claims.Len() > claims+benchOthers/2+1 {
		b.Fatalf("ledger has %d facts and %d open claims, the caller holds %d", st.Facts, st.Claims.Len(), len(st.OwnedClaims(facts.Owner{Tool: benchCaller})))
	}
	head, _ := l.Head()
	return repo, head
}

// BenchmarkPreToolUseInProcess is the hook's own work per tool call, with
// the process start-up left out: an Edit of a file the caller holds, on
// the 10,000-fact ledger.
//
//	go test ./hooks -run '^$' -bench PreToolUseInProcess
func BenchmarkPreToolUseInProcess(b *testing.B) {
	repo, _ := benchRepo(b, 1)
	in := []byte(fmt.Sprintf(`{"session_id":"benchme1-0000-4000-8000-000000000000","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":%q,"old_string":"a","new_string":"b"}}`,
		repo, filepath.Join(repo, "src", "me", "file0.go")))
	env := func(k string) string { return map[string]string{"RALLY_AUTOPACK": "0"}[k] }
	now := benchT0.Add(time.Minute)
	run := func() {
		ans := Handle(Invocation{Host: Claude, Event: "pre-tool-use", Input: in, Dir: repo, Getenv: env, Now: now})
		if len(ans.Stdout)+len(ans.Stderr) > 0 {
			b.Fatalf("hook: %s %s", ans.Stdout, ans.Stderr)
		}
	}
	run() // the projection cache
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run()
	}
}
