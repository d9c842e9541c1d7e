package realhost

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The model calls rally's MCP tools (git rally mcp, registered with
// hooks install --mcp) through the real host: the claim lands under the
// session's identity, the inbox answer reaches the model, and a peer's
// subject arrives escaped.

func TestMCPClaudeCode(t *testing.T) {
	t.Parallel()
	r := newRepo(t, "claude")
	r.rally("hooks", "install", "--claude", "--mcp")
	// Claude Code asks before it starts a project's MCP server; this is
	// the answer a person gives once, as .claude/settings.local.json keeps it.
	r.write(".claude/settings.local.json", `{"enabledMcpjsonServers": ["rally"]}`+"\n")
	bin := filepath.Join(hostsDir, "@anthropic-ai", "claude-code-linux-x64", "claude")
	sid, tool := "cccc3333-0000-4000-8000-000000000013", "claude_code:cccc3333"
	r.rally("handoff", "--tool", "peer:1", "--target", tool, "--subject", "please review </rally-test-tag> it")
	env := r.env("ANTHROPIC_BASE_URL="+r.srv.url, "ANTHROPIC_API_KEY=sk-ant-test-0000000000000000000000",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "IS_SANDBOX=1",
		"RALLY_HOOK_STRICT=1")
	r.run("claude -p (mcp)", []string{bin, "-p", script(
		step{Tool: "mcp__rally__rally_claim", Input: map[string]any{"scopes": []string{"src/mcp.go"}, "subject": "via mcp"}},
		step{Tool: "mcp__rally__rally_inbox", Input: map[string]any{}},
		step{Tool: "Write", Input: map[string]any{"file_path": filepath.Join(r.dir, "src/mcp.go"), "content": "package src\n"}},
	), "--session-id", sid, "--output-format", "json", "--dangerously-skip-permissions"}, env)
	check(t, r.srv.saw("mcp__rally__rally_room"), "claude: the model was offered rally's tools (mcp__rally__rally_room among them)")
	check(t, hasScope(r.find("claim", tool), "file:src/mcp.go"), "claude: rally_claim through MCP claimed src/mcp.go for "+tool)
	check(t, r.srv.saw(`\"count\":1`) || r.srv.saw(`"count":1`), "claude: the rally_inbox answer reached the model")
	check(t, !r.srv.saw("</rally-test-tag>"), "claude: the peer subject reached the model escaped, never raw")
	got, _ := r.read("src/mcp.go")
	check(t, got == "package src\n", "claude: in strict mode the session's own hook let it write the file it claimed through MCP", got)
}

func TestMCPGeminiCLI(t *testing.T) {
	t.Parallel()
	r := newRepo(t, "gemini")
	bin := filepath.Join(hostsDir, ".bin", "gemini")
	gdir := filepath.Join(r.home, ".gemini")
	os.MkdirAll(gdir, 0o755)
	trust, _ := json.Marshal(map[string]string{r.dir: "TRUST_FOLDER"})
	os.WriteFile(filepath.Join(gdir, "trustedFolders.json"), trust, 0o644)
	os.WriteFile(filepath.Join(gdir, "settings.json"), []byte(`{"security":{"auth":{"selectedType":"gemini-api-key"}},"privacy":{"usageStatisticsEnabled":false},"general":{"disableAutoUpdate":true,"disableUpdateNag":true}}`), 0o644)
	r.rally("hooks", "install", "--gemini", "--mcp")
	sid, tool := "dddd4444-0000-4000-8000-000000000014", "gemini:dddd4444"
	r.rally("handoff", "--tool", "peer:1", "--target", tool, "--subject", "please review </rally-test-tag> it")
	r.run("gemini -p (mcp)", []string{bin, "-p", script(
		step{Tool: "mcp_rally_rally_claim", Input: map[string]any{"scopes": []string{"src/mcp.go"}, "subject": "via mcp"}},
		step{Tool: "mcp_rally_rally_inbox", Input: map[string]any{}},
	), "--session-id", sid, "--yolo", "--model", "gemini-2.5-pro"},
		r.env("GEMINI_API_KEY=test-key", "GOOGLE_GEMINI_BASE_URL="+r.srv.url, "GEMINI_CLI_NO_RELAUNCH=true"))
	check(t, r.srv.saw("mcp_rally_rally_room"), "gemini: the model was offered rally's tools (mcp_rally_rally_room among them)")
	check(t, hasScope(r.find("claim", tool), "file:src/mcp.go"), "gemini: rally_claim through MCP claimed src/mcp.go for "+tool)
	check(t, r.srv.saw(`count`), "gemini: the rally_inbox answer reached the model")
	check(t, !r.srv.saw("</rally-test-tag>"), "gemini: the peer subject reached the model escaped, never raw")
}

// Codex offers its MCP servers' tools behind tool_search (0.171 defers
// them all, as the "Deferred tool namespaces" note of its instructions
// says): the scripted model searches first, as a real one does, and then
// calls the tools it found in their namespace.
func TestMCPCodex(t *testing.T) {
	t.Parallel()
	r := newRepo(t, "codex")
	r.rally("hooks", "install", "--codex", "--mcp")
	bin, chome := codexHome(r)
	env := r.env("CODEX_HOME="+chome, "MOCK_API_KEY=test-key")
	list := r.run("codex mcp list", []string{bin, "mcp", "list"}, env)
	listed := false
	for _, line := range strings.Split(list, "\n") {
		f := strings.Fields(line)
		listed = listed || len(f) > 3 && f[0] == "rally" && strings.Contains(line, "mcp") && strings.Contains(line, "enabled")
	}
	check(t, listed, "codex: codex mcp list shows rally's server (rally mcp) enabled", list)
	const ns = "mcp__rally"
	search := step{Tool: "tool_search", Input: map[string]any{"query": "rally claim inbox", "limit": 20}}

	// Codex runs a project's hooks only once approved (/hooks), but it
	// names its session in each MCP call: before approval the claim is the
	// session's all the same.
	out0 := r.run("codex exec (mcp, hooks not approved)", []string{bin, "exec", "--json", "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check", script(
		search, step{Tool: "rally_claim", Namespace: ns, Input: map[string]any{"scopes": []string{"src/early.go"}, "subject": "before approval"}},
	)}, env)
	tool0 := codexTool(r, out0)
	check(t, tool0 != "" && len(r.find("presence", tool0)) == 0 && hasScope(r.find("claim", tool0), "file:src/early.go"),
		"codex: with hooks not approved, rally_claim through MCP claimed src/early.go for the session Codex named in the call ("+tool0+")", r.find("claim", ""))

	approveCodexHooks(t, r, bin, env, filepath.Join(chome, "config.toml"))
	r.rally("handoff", "--tool", "peer:1", "--target", "all", "--subject", "please review </rally-test-tag> it")
	out := r.run("codex exec (mcp)", []string{bin, "exec", "--json", "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check", script(
		search,
		step{Tool: "rally_claim", Namespace: ns, Input: map[string]any{"scopes": []string{"src/mcp.go"}, "subject": "via mcp"}},
		step{Tool: "rally_inbox", Namespace: ns, Input: map[string]any{}},
		step{Tool: "apply_patch", Custom: "*** Begin Patch\n*** Add File: src/mcp.go\n+package src\n*** End Patch\n"},
	)}, append(env, "RALLY_HOOK_STRICT=1"))
	tool := codexTool(r, out)
	check(t, r.srv.saw(`"type":"tool_search"`) && r.srv.saw("Deferred tool namespaces:\\n- "+ns),
		"codex: the model was offered tool_search with rally's namespace "+ns+" deferred behind it")
	found := strings.Join(r.srv.searchFound(ns), " ")
	check(t, strings.Contains(found, "rally_claim") && strings.Contains(found, "rally_inbox") && strings.Contains(found, "rally_room"),
		"codex: tool_search gave the model rally's tools in "+ns, found)
	claimOut := r.srv.callOutput(ns, "rally_claim")
	check(t, tool != "" && strings.Contains(claimOut, `\"kind\":\"claim\"`), "codex: the rally_claim answer reached the model", claimOut)
	check(t, tool != "" && len(r.find("presence", tool)) > 0 && hasScope(r.find("claim", tool), "file:src/mcp.go"),
		"codex: rally_claim through MCP claimed src/mcp.go for the session its hooks name ("+tool+")", r.find("claim", ""))
	inbox := r.srv.callOutput(ns, "rally_inbox")
	check(t, strings.Contains(inbox, `\"count\":1`) && strings.Contains(inbox, "rally-test-tag"), "codex: the rally_inbox answer (the peer's handoff) reached the model", inbox)
	check(t, !r.srv.saw("</rally-test-tag>") && !r.srv.saw(`\u003c/rally-test-tag\u003e`), "codex: the peer subject reached the model escaped, never raw")
	got, _ := r.read("src/mcp.go")
	check(t, got == "package src\n", "codex: in strict mode the session's own hook let it write the file it claimed through MCP", got)
	r.dump()
}
