package testscripts

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// injectFacts commits hand-written fact lines onto the ledger, as a
// hostile remote or a hand edit would (name -> line), under one segment.
func injectFacts(t testing.TB, dir string, lines map[string]string) {
	t.Helper()
	idx := filepath.Join(t.TempDir(), "index")
	env := append(os.Environ(), "GIT_INDEX_FILE="+idx)
	g := func(stdin string, args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	head := g("", "rev-parse", "refs/rally/ledger")
	g("", "read-tree", "refs/rally/ledger")
	for name, line := range lines {
		blob := g(line, "hash-object", "-w", "--stdin")
		g("", "update-index", "--add", "--cacheinfo", "100644,"+blob+",facts/2026-03/01/0009/"+name)
	}
	tree := g("", "write-tree")
	commit := g("", "commit-tree", tree, "-p", head, "-m", "hand edit")
	g("", "update-ref", "refs/rally/ledger", commit, head)
}

// oneJSON fails unless s is exactly one JSON value (and white space).
func oneJSON(t *testing.T, what, s string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: stdout is not a JSON object: %v\n%s", what, err, s)
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		t.Fatalf("%s: stdout holds more than one JSON document (%v)\n%s", what, err, s)
	}
	return v
}

// With --json stdout holds exactly one JSON document, whatever happens
// (SPEC §7): doctor with problems prints its result with "ok": false and
// exits 1, and no error object after it; failing commands print only the
// error object.
func TestOneJSONDocumentOnFailure(t *testing.T) {
	dir := newRepo(t)
	rally(t, dir, "note", "--tool", "a:1", "--subject", "one")
	rally(t, dir, "claim", "src/a.go", "--tool", "a:1")
	injectFacts(t, dir, map[string]string{
		"f_00000000000000c2.json": `{"v":1,"id":"f_00000000000000c2","kind":"note","tool":"b","at":"2026-03-01T10:00:00.000Z","clock":9,"subject":"wrong id"}` + "\n",
	})
	r := run(dir, nil, "doctor", "--json")
	if r.code != 1 {
		t.Fatalf("doctor --json with a corrupt fact: exit %d, want 1\n%s", r.code, r.stderr)
	}
	v := oneJSON(t, "doctor --json", r.stdout)
	if v["ok"] != false {
		t.Fatalf("doctor --json: ok = %v, want false\n%s", v["ok"], r.stdout)
	}
	if !strings.Contains(r.stderr, "git-rally: error: doctor found") {
		t.Errorf("doctor: stderr lacks the error line:\n%s", r.stderr)
	}
	for _, c := range []struct {
		code int
		args []string
	}{
		{3, []string{"claim", "src/a.go", "--tool", "b:1", "--json"}},
		{2, []string{"claim", "bogus:x", "--tool", "b:1", "--json"}},
		{2, []string{"show", "f_ffffffffffff", "--json"}},
		{2, []string{"note", "--json"}},
		{2, []string{"room", "--json", "--bogus"}},
		{3, []string{"release", "src/a.go", "--tool", "b:1", "--json"}},
	} {
		r := run(dir, nil, c.args...)
		what := "git-rally " + strings.Join(c.args, " ")
		if r.code != c.code {
			t.Errorf("%s: exit %d, want %d\n%s", what, r.code, c.code, r.stderr)
		}
		v := oneJSON(t, what, r.stdout)
		if _, ok := v["error"]; !ok {
			t.Errorf("%s: no error object:\n%s", what, r.stdout)
		}
	}
	if bytes.Contains([]byte(r.stdout), []byte(`"error"`)) {
		t.Errorf("doctor --json printed an error object:\n%s", r.stdout)
	}
}
