package testscripts

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
)

// A tool call over the pipe against the same command run as a process, on
// one repository with a few hundred facts:
//
//	go test ./testscripts -run '^$' -bench 'MCP|Process' -benchtime 200x
//
// The bar (issue 19): a tool call costs at most 1.2x the process. The
// server keeps the ledger open, so it should cost far less.

// benchRepo is a repository whose room holds claims, handoffs and peers.
func benchRepo(b *testing.B) string {
	b.Helper()
	dir := newRepo(b)
	for i := 0; i < 40; i++ {
		who := fmt.Sprintf("peer:%d", i%8)
		if r := run(dir, nil, "claim", fmt.Sprintf("pkg%d/f%d.go", i%8, i), "--tool", who, "--subject", "work"); r.code != 0 {
			b.Fatalf("claim: %s", r.stderr)
		}
		if i%4 == 0 {
			run(dir, nil, "handoff", "--tool", who, "--target", "bench:1", "--subject", fmt.Sprintf("take %d", i))
		}
	}
	return dir
}

// rallyBin is the git-rally the benchmarks time: the real binary when go
// can build it, else the one on PATH.
func rallyBin(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	if err := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "github.com/git-rally/git-rally/cmd/git-rally",
		"github.com/git-rally/git-rally/cmd/git-rally-server").Run(); err == nil {
		return filepath.Join(dir, "git-rally")
	}
	p, err := exec.LookPath("git-rally")
	if err != nil {
		b.Skip("no git-rally")
	}
	return p
}

func benchProcess(b *testing.B, args func(i int) []string) {
	dir, bin := benchRepo(b), rallyBin(b)
	env := mcpEnv("RALLY_TOOL=bench:1", "RALLY_AUTOPACK=0")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(bin, args(i)...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %v\n%s", args(i), err, out)
		}
	}
}

func benchMCP(b *testing.B, name string, args func(i int) map[string]any) {
	dir, bin := benchRepo(b), rallyBin(b)
	s := startMCPBin(b, bin, dir, mcpEnv("RALLY_TOOL=bench:1", "RALLY_AUTOPACK=0"))
	callTool(b, s, "rally_room", nil) // the handshake and the first read are not the steady state
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if a := callTool(b, s, name, args(i)); a.isError {
			b.Fatalf("%s: %s", name, a.text)
		}
	}
}

func BenchmarkProcessRoomJSON(b *testing.B) {
	benchProcess(b, func(int) []string { return []string{"room", "--json"} })
}

func BenchmarkMCPRoomFull(b *testing.B) {
	benchMCP(b, "rally_room", func(int) map[string]any { return map[string]any{"full": true} })
}

func BenchmarkProcessRoomCompact(b *testing.B) {
	benchProcess(b, func(int) []string { return []string{"room", "--compact", "--json"} })
}

func BenchmarkMCPRoomCompact(b *testing.B) {
	benchMCP(b, "rally_room", func(int) map[string]any { return nil })
}

func BenchmarkProcessClaim(b *testing.B) {
	benchProcess(b, func(i int) []string { return []string{"claim", fmt.Sprintf("new/f%d.go", i), "--json"} })
}

func BenchmarkMCPClaim(b *testing.B) {
	benchMCP(b, "rally_claim", func(i int) map[string]any { return map[string]any{"scopes": []string{fmt.Sprintf("new/f%d.go", i)}} })
}
