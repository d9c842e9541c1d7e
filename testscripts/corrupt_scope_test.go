package testscripts

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/git-rally/git-rally/facts"
)

// hostileFact is a sealed fact (its id the hash of its content) as a
// hostile remote would write it.
func hostileFact(f facts.Fact) (string, string) {
	f.V = 1
	if f.At == "" {
		f.At = "2026-03-01T10:00:00.000Z"
	}
	f.Seal()
	return f.ID + ".json", string(f.Raw)
}

// nonCanonicalScopes are scopes no append writes (SPEC §3): issue 26's
// reproduction and more of the same.
var nonCanonicalScopes = []string{
	"file:../../etc/passwd",
	"file:/etc/passwd",
	"dir:",
	"bogus:thing",
	"port:99999",
	"file:src//api.ts",
	"dir:src/../src",
	"file:",
	"port:0",
	"port:08080",
	"file:./src/api.ts",
	"dir:src/",
	"src/api.ts",
	"file:.git/config",
	"service: db",
	"file:.",
	"glob:src/[",
	":x",
	"file:" + strings.Repeat("x", 2000),
	"port:-1",
}

// A claim whose scope is not canonical never counts as a claim: it is a
// corrupt fact, reported by doctor (bad-scope) and skipped by the room,
// the write check and claim; "glob:**" and "dir:." are canonical, so a
// claim of them is a legitimate claim of everything.
func TestNonCanonicalScopesAreCorrupt(t *testing.T) {
	dir := newRepo(t)
	rally(t, dir, "note", "--tool", "a:1", "--subject", "one")
	lines := map[string]string{}
	for i, sc := range nonCanonicalScopes {
		name, line := hostileFact(facts.Fact{Kind: "claim", Tool: "evil:1", Clock: int64(10 + i), Scopes: []string{sc}, Access: "exclusive", LeaseS: 86400})
		lines[name] = line
	}
	injectFacts(t, dir, lines)

	r := run(dir, nil, "doctor", "--json")
	if r.code != 1 {
		t.Fatalf("doctor: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	var doc struct {
		OK       bool `json:"ok"`
		Problems []struct{ Code, Message, Path string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	bad := map[string]bool{}
	for _, p := range doc.Problems {
		if p.Code == "bad-scope" {
			bad[strings.TrimSuffix(p.Path[strings.LastIndexByte(p.Path, '/')+1:], ".json")+".json"] = true
		}
	}
	for i, sc := range nonCanonicalScopes {
		name, _ := hostileFact(facts.Fact{Kind: "claim", Tool: "evil:1", Clock: int64(10 + i), Scopes: []string{sc}, Access: "exclusive", LeaseS: 86400})
		if !bad[name] {
			t.Errorf("scope %.60q: doctor reports no bad-scope problem", sc)
		}
	}
	if n := strings.TrimSpace(rally(t, dir, "room", "--json", "--query", "claims.#")); n != "0" {
		t.Errorf("the room counts %s claims of non-canonical scopes, want 0", n)
	}
	check := rally(t, dir, "check", "before-write", "src/api.ts", "src/x/y.go", "--tool", "b:1", "--json")
	if !strings.Contains(check, `"allow": true`) {
		t.Errorf("check before-write: a non-canonical claim blocks:\n%s", check)
	}
	rally(t, dir, "claim", "src/api.ts", "dir:src", "port:8080", "service:db", "--tool", "b:1")
	rally(t, dir, "release", "src/api.ts", "dir:src", "port:8080", "service:db", "--tool", "b:1")

	// phase: the canonical claims of everything are claims
	lines = map[string]string{}
	for i, sc := range []string{"glob:**", "dir:."} {
		name, line := hostileFact(facts.Fact{Kind: "claim", Tool: "everything:1", Clock: int64(100 + i), Scopes: []string{sc}, Access: "exclusive", LeaseS: 86400})
		lines[name] = line
	}
	injectFacts(t, dir, lines)
	if n := strings.TrimSpace(rally(t, dir, "room", "--json", "--query", "claims.#")); n != "2" {
		t.Errorf("the room counts %s claims of glob:** and dir:., want 2", n)
	}
	if r := run(dir, nil, "claim", "src/api.ts", "--tool", "b:1"); r.code != 3 {
		t.Errorf("claim under glob:** and dir:.: exit %d, want 3\n%s", r.code, r.stderr)
	}
}

// A fact over the limits of §2 read from the ledger is corrupt: a blob
// over 1 MiB (never inflated past the cap), a subject over 1 KiB, a body
// over 64 KiB, a tool id outside [A-Za-z0-9_.+:/-]. Doctor reports each,
// projections skip them, the ledger keeps them and sync carries them.
func TestOversizeAndBadIDFactsAreCorrupt(t *testing.T) {
	dir := newRepo(t)
	rally(t, dir, "note", "--tool", "a:1", "--subject", "one")
	type c struct {
		code string
		f    facts.Fact
	}
	cases := []c{
		{"oversize", facts.Fact{Kind: "note", Tool: "m:1", Clock: 5, Subject: strings.Repeat("s", 2<<20)}},
		{"oversize", facts.Fact{Kind: "note", Tool: "m:1", Clock: 6, Subject: strings.Repeat("s", 1025)}},
		{"oversize", facts.Fact{Kind: "note", Tool: "m:1", Clock: 7, Body: strings.Repeat("b", 64<<10+1)}},
		{"bad-tool", facts.Fact{Kind: "note", Tool: "m:`id`", Clock: 8, Subject: "x"}},
		{"bad-tool", facts.Fact{Kind: "note", Tool: "m:$(id)", Clock: 9, Subject: "x"}},
		{"bad-tool", facts.Fact{Kind: "note", Tool: "m:${IFS}", Clock: 10, Subject: "x"}},
		{"bad-tool", facts.Fact{Kind: "handoff", Tool: "m:1", Target: "a b", Clock: 11, Subject: "x"}},
		{"bad-tool", facts.Fact{Kind: "claim", Tool: strings.Repeat("t", 129), Clock: 12, Scopes: []string{"file:a"}}},
	}
	lines := map[string]string{}
	for _, k := range cases {
		name, line := hostileFact(k.f)
		lines[name] = line
	}
	injectFacts(t, dir, lines)
	r := run(dir, nil, "doctor", "--json")
	if r.code != 1 {
		t.Fatalf("doctor: exit %d, want 1\n%s", r.code, r.stderr)
	}
	var doc struct{ Problems []struct{ Code, Path string } }
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range doc.Problems {
		got[p.Path[strings.LastIndexByte(p.Path, '/')+1:]] = p.Code
	}
	for _, k := range cases {
		name, _ := hostileFact(k.f)
		if got[name] != k.code {
			t.Errorf("fact %.60q: doctor says %q, want %q", k.f.Subject+k.f.Tool, got[name], k.code)
		}
	}
	logged := rally(t, dir, "log", "--json")
	if len(logged) > 64<<10 || strings.Contains(logged, "m:1") || strings.Contains(logged, "$(id)") {
		t.Errorf("log shows corrupt facts (%d bytes)", len(logged))
	}
	if n := strings.TrimSpace(rally(t, dir, "room", "--json", "--query", "totals.facts")); n != "1" {
		t.Errorf("room counts %s facts, want 1", n)
	}
	// kept in the ledger and synced unchanged
	bare := t.TempDir()
	gitT(t, bare, "init", "-q", "--bare")
	gitT(t, dir, "remote", "add", "origin", bare)
	rally(t, dir, "sync")
	if a, b := gitT(t, dir, "rev-parse", "refs/rally/ledger^{tree}"), gitT(t, bare, "rev-parse", "refs/rally/ledger^{tree}"); a != b {
		t.Errorf("the remote's ledger tree %s differs from ours %s", b, a)
	}
	for name := range lines {
		gitT(t, bare, "cat-file", "-e", "refs/rally/ledger:facts/2026-03/01/0009/"+name)
	}
}
