package testscripts

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// malformedLines are what an adversarial host wrote to `git rally mcp`
// (issue 26, finding 4): each is one line on the server's stdin. want is
// the JSON-RPC error code the server must answer with (0: no answer, a
// notification or a response nobody asked for).
// They are built when the test runs, never at package initialisation:
// this test binary is also the git-rally that every script runs.
type malformedLine struct {
	name string
	line string
	want int
	id   any // the id the error must carry (nil: null)
}

func malformedLines() []malformedLine {
	return []malformedLine{
		{"not json", "this is not json", -32700, nil},
		{"truncated object", `{"jsonrpc":"2.0","id":1,"method":`, -32700, nil},
		{"empty batch", `[]`, -32600, nil},
		{"batch", `[{"jsonrpc":"2.0","id":7,"method":"ping"}]`, -32600, nil},
		{"batch of junk", `[1,2,3]`, -32600, nil},
		{"bare string", `"hello"`, -32600, nil},
		{"bare null", `null`, -32600, nil},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600, nil},
		{"array id", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, -32600, nil},
		{"bool id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, -32600, nil},
		{"wrong version", `{"jsonrpc":"1.0","id":8,"method":"ping"}`, -32600, float64(8)},
		{"method not a string", `{"jsonrpc":"2.0","id":9,"method":42}`, -32600, float64(9)},
		{"nul bytes", "\x00\x00\x00\x00", -32700, nil},
		{"nul inside a request", "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"ping\x00\"}", -32700, nil},
		{"two values on a line", `{"jsonrpc":"2.0","id":11,"method":"ping"} {"x":1}`, -32700, nil},
		{"deep nesting", strings.Repeat("[", 200000) + strings.Repeat("]", 200000), -32700, nil},
		{"deep params", `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"rally_room","arguments":{"full":` +
			strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000) + "}}}", -32700, nil},
		// Well-formed JSON-RPC that the SDK answers (or ignores) itself.
		{"unknown method", `{"jsonrpc":"2.0","id":14,"method":"no/such"}`, -32601, float64(14)},
		{"params not an object", `{"jsonrpc":"2.0","id":15,"method":"tools/call","params":[1]}`, -32602, float64(15)},
		{"unsolicited response", `{"jsonrpc":"2.0","id":99,"result":{}}`, 0, nil},
		{"unknown tool", `{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"rally_nope"}}`, -32602, float64(16)},
		{"50 MB line", `{"jsonrpc":"2.0","id":13,"method":"ping","params":{"x":"` + strings.Repeat("A", 50<<20) + `"}}`, -32600, nil},
	}
}

// TestMCPMalformedInput drives the real server over pipes: every malformed
// line gets the JSON-RPC error it calls for, and the server still answers a
// valid call after all of them.
func TestMCPMalformedInput(t *testing.T) {
	dir := newRepo(t)
	cmd := exec.Command("git-rally", "mcp")
	cmd.Dir, cmd.Env = dir, mcpEnv("RALLY_TOOL=me:1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()

	lines := make(chan []byte, 64)
	go func() {
		r := bufio.NewReader(stdout)
		for {
			l, err := r.ReadBytes('\n')
			if len(l) > 0 {
				lines <- l
			}
			if err != nil {
				close(lines)
				return
			}
		}
	}()
	next := func(what string) map[string]any {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("%s: the server closed its output (exit: %v)\nstderr: %s", what, cmd.Wait(), stderr.String())
			}
			var m map[string]any
			if err := json.Unmarshal(l, &m); err != nil {
				t.Fatalf("%s: the answer is not a JSON object: %v\n%.300s", what, err, l)
			}
			return m
		case <-time.After(time.Minute):
			t.Fatalf("%s: no answer", what)
		}
		return nil
	}
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(stdin, s+"\n"); err != nil {
			t.Fatalf("writing: %v\nstderr: %s", err, stderr.String())
		}
	}

	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"hostile","version":"1"}}}`)
	if m := next("initialize"); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	for _, c := range malformedLines() {
		send(c.line)
		if c.want == 0 {
			continue
		}
		m := next(c.name)
		e, _ := m["error"].(map[string]any)
		if e == nil {
			t.Errorf("%s: no error in %v", c.name, m)
			continue
		}
		if code, _ := e["code"].(float64); int(code) != c.want {
			t.Errorf("%s: error code %v, want %d (%v)", c.name, e["code"], c.want, e["message"])
		}
		if id, has := m["id"]; !has || fmt.Sprint(id) != fmt.Sprint(c.id) {
			t.Errorf("%s: id %v, want %v", c.name, m["id"], c.id)
		}
	}

	// Still serving: a valid call answers.
	send(`{"jsonrpc":"2.0","id":100,"method":"tools/call","params":{"name":"rally_room","arguments":{}}}`)
	m := next("rally_room after the malformed lines")
	if m["id"] != float64(100) || m["result"] == nil {
		t.Fatalf("rally_room: %v", m)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("server exit: %v\n%s", err, stderr.String())
	}
}

// A call that cannot finish (its append waits on a ref lock a plain git
// holds) is answered at its own time limit, and the calls after it answer
// meanwhile: calls do not wait for each other (issue 26, finding 4).
func TestMCPSlowCallBlocksNoOther(t *testing.T) {
	dir := newRepo(t)
	lock := filepath.Join(dir, ".git", "refs", "rally", "ledger.lock")
	if err := os.WriteFile(lock, []byte("0000000000000000000000000000000000000000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startMCP(t, dir, mcpEnv("RALLY_TOOL=me:1", "RALLY_LOCK_TIMEOUT=10m", "RALLY_MCP_CALL_TIMEOUT=3s"))

	claimed := make(chan answer, 1)
	go func() {
		claimed <- callTool(t, s, "rally_claim", map[string]any{"scopes": []string{"slow.go"}})
	}()
	// Whatever the order the calls reach the server in, the room answers
	// while the claim still waits on git's lock.
	for i := 0; i < 3; i++ {
		callTool(t, s, "rally_room", map[string]any{}).ok(t, "rally_room beside a stuck claim")
		select {
		case a := <-claimed:
			t.Fatalf("the claim answered while git's lock was still held: %s", a.text)
		default:
		}
	}
	a := <-claimed
	if !a.isError || !strings.Contains(a.text, `"timeout"`) {
		t.Fatalf("the stuck claim: %s, want a timeout error", a.text)
	}
	callTool(t, s, "rally_room", map[string]any{}).ok(t, "rally_room after the timeout")

	// The lock goes: the claim that outlived its answer lands after all.
	os.Remove(lock)
	for i := 0; ; i++ {
		if strings.Contains(rally(t, dir, "log", "--json"), "slow.go") {
			break
		}
		if i == 600 {
			t.Fatal("the timed-out claim never landed once the lock was gone")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A list argument longer than the command line takes is refused before
// any command runs.
func TestMCPArrayCap(t *testing.T) {
	dir := newRepo(t)
	s := startMCP(t, dir, mcpEnv("RALLY_TOOL=me:1"))
	many := make([]string, 257)
	for i := range many {
		many[i] = fmt.Sprintf("src/f%d.go", i)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"rally_claim", map[string]any{"scopes": many}},
		{"rally_check_before_write", map[string]any{"paths": many}},
		{"rally_room", map[string]any{"paths": many}},
		{"rally_release", map[string]any{"targets": many}},
		{"rally_handoff", map[string]any{"target": "all", "subject": "x", "files": many}},
		{"rally_note", map[string]any{"subject": "x", "scopes": many}},
	} {
		a := callTool(t, s, c.tool, c.args)
		if !a.isError || !strings.Contains(a.text, "256") {
			t.Errorf("%s with 257 items: %s, want a usage error naming the cap", c.tool, a.text)
		}
	}
	if strings.Contains(rally(t, dir, "log", "--json"), "src/f1.go") {
		t.Error("a refused call wrote a fact")
	}
	// 256 is fine.
	callTool(t, s, "rally_claim", map[string]any{"scopes": many[:256]}).ok(t, "rally_claim of 256 scopes")
}
