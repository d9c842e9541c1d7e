package realhost

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Hooks an older rally installed run `git rally hook ...`; this one runs
// git-rally directly. Through the real Codex: hooks install changes the
// approved old lines in place (Codex keys its approvals by file, event and
// position: the keys stay), Codex then holds them for approval again (as
// the README's upgrade note says), and once approved the new lines are
// trusted.
func TestCodexUpgrade(t *testing.T) {
	t.Parallel()
	r := newRepo(t, "codex")
	bin, chome := codexHome(r)
	env := r.env("CODEX_HOME="+chome, "MOCK_API_KEY=test-key")
	file := filepath.Join(r.dir, ".codex", "hooks.json")
	cur, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	old := strings.ReplaceAll(string(cur), `"git-rally hook `, `"git rally hook `)
	if err := os.WriteFile(file, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	status := r.rally("hooks", "status", "--codex")
	check(t, strings.Contains(status, "codex: outdated") && strings.Contains(status, "run git-rally directly"),
		"codex upgrade: hooks status calls the old lines outdated", status)

	approveCodexHooks(t, r, bin, env, filepath.Join(chome, "config.toml"))
	trust := func() (keys map[string]string, n int) {
		keys = map[string]string{}
		for _, h := range codexHooks(t, r, bin, env) {
			if rallyHook(h) {
				keys[h.Key] = h.TrustStatus + " " + h.Command
				n++
			}
		}
		return keys, n
	}
	before, n := trust()
	allTrusted := n == codexRallyHooks
	for _, v := range before {
		allTrusted = allTrusted && strings.HasPrefix(v, "trusted git rally hook ")
	}
	check(t, allTrusted, "codex upgrade: Codex trusts the approved old lines (all 7)", before)

	out := r.rally("hooks", "install", "--codex")
	check(t, strings.Contains(out, "Codex skips them until you approve them again"), "codex upgrade: hooks install says Codex wants the changed hooks approved again", out)
	after, n := trust()
	same, held := n == codexRallyHooks, n == codexRallyHooks
	for k, v := range after {
		_, ok := before[k]
		same = same && ok && strings.Contains(v, " git-rally hook codex ")
		held = held && !strings.HasPrefix(v, "trusted ")
	}
	check(t, same, "codex upgrade: install changed the 7 lines in place (same keys, now git-rally hook)", after)
	check(t, held, "codex upgrade: Codex holds the changed lines for approval again", after)
	t.Logf("codex upgrade: after install: %v", after)

	approveCodexHooks(t, r, bin, env, filepath.Join(chome, "config.toml"))
	again, _ := trust()
	ok := len(again) == codexRallyHooks
	for _, v := range again {
		ok = ok && strings.HasPrefix(v, "trusted git-rally hook ")
	}
	check(t, ok, "codex upgrade: once approved again, Codex trusts the new lines", again)
}

// codexRallyHooks is how many hooks rally installs for Codex: session
// start, pre-tool-use, user-prompt-submit, session end, and the activity
// events post-tool-use, permission-request and stop.
const codexRallyHooks = 7
