package realhost

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestGeminiCLI(t *testing.T) {
	t.Parallel() // each host has its own repository, HOME and model server
	r := newRepo(t, "gemini")
	bin := filepath.Join(hostsDir, ".bin", "gemini")
	s1, t1 := "cccc3333-0000-4000-8000-000000000003", "gemini:cccc3333"
	peerSetup(r, t1)
	// Gemini CLI loads project hooks only in a trusted folder.
	gdir := filepath.Join(r.home, ".gemini")
	os.MkdirAll(gdir, 0o755)
	trust, _ := json.Marshal(map[string]string{r.dir: "TRUST_FOLDER"})
	os.WriteFile(filepath.Join(gdir, "trustedFolders.json"), trust, 0o644)
	os.WriteFile(filepath.Join(gdir, "settings.json"), []byte(`{"security":{"auth":{"selectedType":"gemini-api-key"}},"privacy":{"usageStatisticsEnabled":false},"general":{"disableAutoUpdate":true,"disableUpdateNag":true}}`), 0o644)
	if out := r.rally("hooks", "status", "--gemini"); strings.Contains(out, "!") {
		t.Errorf("FAIL gemini: hooks status still reports a problem after trusting the folder:\n%s", out)
	} else {
		t.Logf("ok   gemini: hooks status reports the trusted folder as ready")
	}
	// Outside a trusted folder gemini -p refuses to start; with
	// --skip-trust it runs, but registers no project hook.
	empty := filepath.Join(r.home, "untrusted.json")
	os.WriteFile(empty, []byte("{}"), 0o644)
	before, asked := len(r.facts()), len(r.srv.bodies(""))
	r.run("gemini -p --skip-trust (untrusted folder)", []string{bin, "-p", script(), "--skip-trust", "--session-id", "ffff6666-0000-4000-8000-000000000006", "--model", "gemini-2.5-pro"},
		r.env("GEMINI_API_KEY=test-key", "GOOGLE_GEMINI_BASE_URL="+r.srv.url, "GEMINI_CLI_NO_RELAUNCH=true", "GEMINI_CLI_TRUSTED_FOLDERS_PATH="+empty))
	check(t, len(r.srv.bodies("")) > asked && len(r.facts()) == before, "gemini: in an untrusted folder (--skip-trust) the model ran but no rally hook did (as hooks status warns)")
	cmd := exec.Command(filepath.Join(binDir, "git-rally"), "hooks", "status", "--gemini")
	cmd.Dir, cmd.Env = r.dir, r.env("GEMINI_CLI_TRUSTED_FOLDERS_PATH="+empty)
	st, _ := cmd.CombinedOutput()
	check(t, strings.Contains(string(st), "is not trusted"), "gemini: hooks status reports the untrusted folder with its fix", string(st))

	run := func(session string, strict bool, steps ...step) string {
		env := r.env("GEMINI_API_KEY=test-key", "GOOGLE_GEMINI_BASE_URL="+r.srv.url, "GEMINI_CLI_NO_RELAUNCH=true")
		if strict {
			env = append(env, "RALLY_HOOK_STRICT=1")
		}
		return r.run("gemini -p", []string{bin, "-p", script(steps...), "--session-id", session, "--yolo", "--model", "gemini-2.5-pro"}, env)
	}
	abs := func(p string) string { return filepath.Join(r.dir, p) }

	run(s1, false,
		step{Tool: "write_file", Input: map[string]any{"file_path": abs("src/free.go"), "content": "package src // one\n"}},
		step{Tool: "write_file", Input: map[string]any{"file_path": abs("src/held.go"), "content": "package src // two\n"}},
		step{Tool: "run_shell_command", Input: map[string]any{"command": "git rally whoami --json --query tool", "description": "who"}},
	)
	check(t, len(r.find("presence", t1)) > 0, "gemini: installed hooks load; SessionStart recorded presence of "+t1)
	check(t, hasScope(r.find("claim", t1), "file:src/free.go"), "gemini: a write_file of a free file claimed it for "+t1)
	check(t, r.srv.saw("src/held.go is claimed by claude_code:peer"), "gemini: the non-strict warning reached the model (AfterTool additionalContext, read from the request)")
	// Gemini's shell tool refuses $(...): the tool's output is the answer.
	check(t, r.srv.saw(`Output: `+t1+`\n`), "gemini: the agent's own git rally (run_shell_command) runs as "+t1)
	inboxEscaped(t, r, "gemini")
	check(t, len(r.find("leave", t1)) > 0, "gemini: SessionEnd left the room for "+t1)

	s2, t2 := "dddd4444-0000-4000-8000-000000000004", "gemini:dddd4444"
	run(s2, true,
		step{Tool: "write_file", Input: map[string]any{"file_path": abs("src/strict.go"), "content": "package src // denied\n"}},
		step{Tool: "write_file", Input: map[string]any{"file_path": abs("src/free.go"), "content": "package src // second session\n"}},
	)
	_, exists := r.read("src/strict.go")
	check(t, !exists, "gemini: strict mode denied the write_file of a path claude_code:peer holds (file not created)")
	check(t, r.srv.saw("src/strict.go is claimed by claude_code:peer"), "gemini: the denial reason reached the model")
	got, _ := r.read("src/free.go")
	check(t, got == "package src // second session\n", "gemini: a second session after the first ended is not blocked by its claim", got)
	check(t, hasScope(r.find("claim", t2), "file:src/free.go"), "gemini: the second session claimed src/free.go")
	r.dump()
}
