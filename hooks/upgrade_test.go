package hooks

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-rally/git-rally/worktree"
)

func testRepo(t *testing.T) *worktree.Repo {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	r, err := worktree.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// An older version installed `git rally hook` lines into the user's file
// and kept a record of the user's bytes: install moves the lines (and the
// record) on to `git-rally hook`, uninstall still gives back those bytes.
func TestUpgradeKeepsTheUsersBytes(t *testing.T) {
	for _, host := range []string{Claude, Codex, Gemini, Cursor} {
		t.Run(host, func(t *testing.T) {
			r := testRepo(t)
			user := []byte("{\n    \"theme\": \"dark\"\n}\n")
			path := filepath.Join(r.WorkTree, filepath.FromSlash(hostFiles()[host].path))
			os.MkdirAll(filepath.Dir(path), 0o777)
			os.WriteFile(path, user, 0o644)
			if _, err := Install(r, host); err != nil {
				t.Fatal(err)
			}
			// What the older version would have left: the same file with
			// `git rally hook`, and its record.
			cur, _ := os.ReadFile(path)
			old := []byte(strings.ReplaceAll(string(cur), `"git-rally hook `, `"git rally hook `))
			os.WriteFile(path, old, 0o644)
			rec := loadRecord(r, path)
			if rec == nil {
				t.Fatal("no record")
			}
			rec.Wrote = digest(old)
			saveRecord(r, rec)

			if res, _ := Status(r, host); res.State != StateOutdated {
				t.Fatalf("status of the old lines: %q, want outdated", res.State)
			}
			res, err := Install(r, host)
			if err != nil || res.State != StateInstalled || !res.Changed {
				t.Fatalf("install: %+v, %v", res, err)
			}
			if got, _ := os.ReadFile(path); string(got) != string(cur) {
				t.Fatalf("upgraded file:\n%s\nwant:\n%s", got, cur)
			}
			if _, err := Uninstall(r, host); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(path); string(got) != string(user) {
				t.Fatalf("after uninstall:\n%s\nwant the user's bytes:\n%s", got, user)
			}
		})
	}
}

// With no record (the old lines came with a checkout), install records
// nothing, so uninstall removes rally's lines instead of putting the old
// ones back.
func TestUpgradeWithoutRecordUninstallsBothForms(t *testing.T) {
	r := testRepo(t)
	path := filepath.Join(r.WorkTree, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(path), 0o777)
	os.WriteFile(path, []byte(`{"model":"opus","hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"git rally hook claude session-start","timeout":10}]}]}}`), 0o644)
	if _, err := Install(r, Claude); err != nil {
		t.Fatal(err)
	}
	if _, err := Uninstall(r, Claude); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if strings.Contains(string(got), "rally hook") || !strings.Contains(string(got), `"opus"`) {
		t.Fatalf("after uninstall:\n%s", got)
	}
}

func TestPlaceGroupKeepsPosition(t *testing.T) {
	want := json.RawMessage(`{"hooks":[{"type":"command","command":"git-rally hook claude pre-tool-use"}]}`)
	gs := []json.RawMessage{
		json.RawMessage(`{"hooks":[{"type":"command","command":"mine-1"}]}`),
		json.RawMessage(`{"hooks":[{"type":"command","command":"git rally hook claude pre-tool-use"},{"type":"command","command":"mine-2"}]}`),
		json.RawMessage(`{"hooks":[{"type":"command","command":"git-rally hook claude pre-tool-use"}]}`),
		json.RawMessage(`{"hooks":[{"type":"command","command":"mine-3"}]}`),
	}
	got := string(arrayOf(placeGroup(gs, want)))
	exp := `[{"hooks":[{"type":"command","command":"mine-1"}]},` + string(want) + `,{"hooks":[{"type":"command","command":"mine-2"}]},{"hooks":[{"type":"command","command":"mine-3"}]}]`
	if got != exp {
		t.Errorf("placeGroup:\n got %s\nwant %s", got, exp)
	}
}
