package hooks

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/git-rally/git-rally/worktree"
)

// MCPServer is the name rally's server has in every host's configuration:
// its tools show up as mcp__rally__rally_claim and the like.
const MCPServer = "rally"

// MCPHosts are the hosts whose project MCP configuration rally knows.
var MCPHosts = []string{Claude, Codex, Gemini, Cursor}

// HasHooks says whether rally has hooks (not only an MCP server) for host.
func HasHooks(host string) bool {
	_, ok := hostFiles()[host]
	return host == Git || ok
}

// mcpFile says where a host keeps a project's MCP servers and how rally's
// entry reads there. Like the hooks' entries, these bytes change only when
// they must; they run git-rally itself (versions before ran
// `git rally mcp`: status calls that outdated, install replaces it).
type mcpFile struct {
	path  string // relative to the worktree's top level
	entry json.RawMessage
	toml  string // Codex: the table rally appends
}

var mcpFiles = sync.OnceValue(func() map[string]mcpFile {
	return map[string]mcpFile{
		Claude: {path: ".mcp.json", entry: json.RawMessage(`{"type":"stdio","command":"git-rally","args":["mcp"]}`)},
		// Codex clears its MCP servers' environment: env_vars hands on the
		// identity a managed session sets.
		Codex:  {path: ".codex/config.toml", toml: "[mcp_servers.rally]\ncommand = \"git-rally\"\nargs = [\"mcp\"]\nenv_vars = [\"RALLY_TOOL\", \"RALLY_SESSION\"]\n"},
		Gemini: {path: ".gemini/settings.json", entry: json.RawMessage(`{"command":"git-rally","args":["mcp"]}`)},
		Cursor: {path: ".cursor/mcp.json", entry: json.RawMessage(`{"type":"stdio","command":"git-rally","args":["mcp"]}`)},
	}
})

// isRallyServer recognises rally's server entry by what it runs.
func isRallyServer(raw json.RawMessage) bool {
	var e struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return false
	}
	return e.Command == "git" && len(e.Args) > 0 && e.Args[0] == "rally" || e.Command == "git-rally"
}

// mcpThroughGit says whether rally's registered server is the one of
// versions before rally ran git-rally directly: `git rally mcp`.
func mcpThroughGit(mf mcpFile, sf settingsFile) bool {
	if mf.toml != "" {
		lines := splitLines(sf.content)
		start, end := tomlSection(lines)
		return start >= 0 && tomlRunsGit(strings.Join(lines[start:end], ""))
	}
	servers, err := serversOf(sf)
	if err != nil {
		return false
	}
	cur, _ := servers.get(MCPServer)
	var e struct {
		Command string `json:"command"`
	}
	return json.Unmarshal(cur, &e) == nil && e.Command == "git"
}

func mcpResult(host, shown string) Result {
	return Result{Host: host, Path: shown, State: StateNotInstalled, MCP: MCPServer}
}

// InstallMCP registers rally's MCP server in host's project configuration.
// Installing twice changes nothing.
func InstallMCP(r *worktree.Repo, host string) (Result, error) {
	mf, sf, err := readMCP(r, host)
	if err != nil {
		return Result{}, err
	}
	var out []byte
	if mf.toml != "" {
		out, err = tomlInstall(sf, mf)
	} else {
		out, err = jsonInstall(sf, mf)
	}
	if err != nil || out == nil {
		res := mcpStatusOf(r, host, mf, sf)
		return res, err
	}
	if err := writeTracked(r, sf, out, mf.toml != ""); err != nil {
		return Result{}, err
	}
	sf.exists, sf.content = true, out
	if mf.toml == "" {
		sf.doc, _ = parseObject(out)
	}
	res := mcpStatusOf(r, host, mf, sf)
	res.Changed = true
	return res, nil
}

// UninstallMCP removes rally's server and restores what was there: the
// very bytes when the file is as rally left it.
func UninstallMCP(r *worktree.Repo, host string) (Result, error) {
	mf, sf, err := readMCP(r, host)
	if err != nil {
		return Result{}, err
	}
	res := mcpResult(host, sf.shown)
	if !sf.exists {
		return res, nil
	}
	// Gemini keeps hooks and MCP servers in one file: while rally's
	// hooks stay, the record of the original stays for their uninstall.
	hooksLeft := false
	if _, ok := hostFiles()[host]; ok && hostFiles()[host].path == mf.path {
		hooksLeft = sf.result(r, hostFiles()[host], host).State != StateNotInstalled
	}
	rec := loadRecord(r, sf.path)
	if rec != nil && !hooksLeft && digest(sf.content) == rec.Wrote && !(rec.Existed && holdsRally(rec.Original, mf.toml != "")) {
		dropRecord(r, sf.path)
		res.Changed = true
		if rec.Existed {
			return res, writeAtomic(sf.path, rec.Original, rec.Mode)
		}
		err := os.Remove(sf.path)
		removeDirs(rec.MadeDirs)
		return res, err
	}
	var out []byte
	if mf.toml != "" {
		out = tomlRemove(sf.content)
	} else {
		out, err = jsonRemove(sf)
		if err != nil {
			return res, err
		}
	}
	if out == nil {
		return res, nil
	}
	res.Changed = true
	remove := false
	if len(trimSpace(out)) == 0 && mf.toml == "" {
		remove = (rec == nil || !rec.Existed) && !hooksLeft
		out = []byte("{}\n")
	}
	if hooksLeft {
		keepRecord(r, rec, sf.content, out)
	} else {
		dropRecord(r, sf.path)
	}
	if remove {
		return res, os.Remove(sf.path)
	}
	return res, writeAtomic(sf.path, out, sf.mode)
}

// StatusMCP reports whether rally's server is registered for host.
func StatusMCP(r *worktree.Repo, host string) (Result, error) {
	mf, sf, err := readMCP(r, host)
	if err != nil {
		return Result{}, err
	}
	return mcpStatusOf(r, host, mf, sf), nil
}

func mcpStatusOf(r *worktree.Repo, host string, mf mcpFile, sf settingsFile) Result {
	res := mcpResult(host, sf.shown)
	var state string
	if mf.toml != "" {
		state = tomlState(sf.content, mf.toml)
	} else {
		state = jsonState(sf, mf)
	}
	res.State = state
	switch state {
	case StateInstalled:
		res.Problems = mcpProblems(r, host, sf)
	case StateOutdated:
		res.Note = "rally's MCP server entry was changed; `git rally hooks install --" + host + " --mcp` puts it right"
		if mcpThroughGit(mf, sf) {
			res.Note = "rally's MCP server entry runs `git rally mcp` through git; `git rally hooks install --" + host + " --mcp` changes it to run git-rally directly"
		}
	}
	return res
}

// mcpProblems says what the host still needs before it starts rally's
// server: approval of a project's servers (Claude Code), a trusted
// project or folder (Codex, Gemini CLI), a restart (Cursor).
func mcpProblems(r *worktree.Repo, host string, sf settingsFile) []Problem {
	top := r.WorkTree
	home, _ := Env.Home()
	var out []Problem
	if rec := loadRecord(r, sf.path); rec != nil && digest(sf.content) != rec.Wrote {
		out = append(out, Problem{Problem: sf.shown + " was changed after rally registered its server; uninstall will remove only rally's entry"})
	}
	switch host {
	case Claude:
		switch claudeApproval(top, home) {
		case "off":
			out = append(out, Problem{Problem: "rally's server is turned off for this project (disabledMcpjsonServers)",
				Fix: "claude mcp reset-project-choices   # then approve rally when claude starts"})
		case "":
			out = append(out, Problem{Problem: "Claude Code starts a project's .mcp.json servers only once you approve them (it asks when it starts here)",
				Fix: "cd " + shellQuote(top) + " && claude   # approve rally; or list \"rally\" under enabledMcpjsonServers in .claude/settings.local.json"})
		}
	case Codex:
		cfg := filepath.Join(codexHome(home), "config.toml")
		if trusted, _ := codexConfig(cfg, top); !trusted {
			out = append(out, Problem{
				Problem: "Codex reads .codex/config.toml only in a trusted project, and " + top + " is not trusted in " + cfg,
				Fix:     fmt.Sprintf("printf '\\n[projects.%q]\\ntrust_level = \"trusted\"\\n' >> %s   # or trust it when codex asks", top, shellQuote(cfg)),
			})
		}
	case Gemini:
		if !geminiTrusted(home, top) {
			file := geminiTrustFile(home)
			out = append(out, Problem{
				Problem: "Gemini CLI starts no project MCP server outside a trusted folder, and " + top + " is not trusted in " + file,
				Fix:     "cd " + shellQuote(top) + " && gemini   # and trust the folder; or add \"" + top + "\": \"TRUST_FOLDER\" to " + file,
			})
		}
	case Cursor:
		out = append(out, Problem{Problem: "Cursor lists a new project MCP server under Settings > MCP, where it is turned on; a Cursor already open sees it after a restart"})
	}
	return out
}

func readMCP(r *worktree.Repo, host string) (mcpFile, settingsFile, error) {
	mf, ok := mcpFiles()[host]
	if !ok {
		return mf, settingsFile{}, fmt.Errorf("rally has no MCP configuration for host %q", host)
	}
	sf, err := readWorktreeFile(r, mf.path, host+" MCP servers")
	if err != nil {
		return mf, sf, err
	}
	if mf.toml == "" {
		doc, err := parseObject(sf.content)
		if err != nil {
			return mf, sf, fmt.Errorf("%s is not a JSON object rally can merge into: %w", sf.shown, err)
		}
		sf.doc = doc
	}
	return mf, sf, nil
}

// writeTracked writes what install made of a hooks or MCP file (toml: a
// TOML one), remembering the original bytes the first time
// (hooks/installed/), forgetting them when the file was edited since
// rally last wrote it.
func writeTracked(r *worktree.Repo, sf settingsFile, out []byte, toml bool) error {
	rec := loadRecord(r, sf.path)
	switch {
	case rec == nil && holdsRally(sf.content, toml):
		// An older version's entries and no record of what was there
		// before them (a file from a checkout, a lost record): those
		// bytes are not worth restoring, uninstall removes rally's part.
	case rec == nil:
		rec = &record{Path: sf.path, Existed: sf.exists, Original: sf.content, Mode: sf.mode}
	case !sf.exists || digest(sf.content) != rec.Wrote:
		// Edited since rally wrote it: the original cannot come back
		// byte for byte any more without losing those edits.
		rec = nil
		dropRecord(r, sf.path)
	}
	made, err := mkdirs(filepath.Dir(sf.path))
	if err != nil {
		return err
	}
	if err := writeAtomic(sf.path, out, sf.mode); err != nil {
		return fmt.Errorf("writing %s: %w", sf.shown, err)
	}
	if rec != nil {
		rec.Wrote = digest(out)
		rec.MadeDirs = append(rec.MadeDirs, made...)
		saveRecord(r, rec)
	}
	return nil
}

// mcpIn says whether rally's MCP server is registered in the host's hooks
// file (Gemini keeps both in one).
func mcpIn(host string, sf settingsFile) bool {
	mf, ok := mcpFiles()[host]
	return ok && mf.toml == "" && mf.path == hostFiles()[host].path && sf.doc != nil && jsonState(sf, mf) != StateNotInstalled
}

// keepRecord moves the record on to what rally now wrote, when the file
// was as rally had left it; else the original cannot come back.
func keepRecord(r *worktree.Repo, rec *record, before, after []byte) {
	if rec == nil {
		return
	}
	if digest(before) != rec.Wrote {
		dropRecord(r, rec.Path)
		return
	}
	rec.Wrote = digest(after)
	saveRecord(r, rec)
}

func trimSpace(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	for j > i && (b[j-1] == ' ' || b[j-1] == '\n' || b[j-1] == '\t' || b[j-1] == '\r') {
		j--
	}
	return b[i:j]
}

// The JSON hosts: an "mcpServers" object keyed by server name.

func serversOf(sf settingsFile) (*object, error) {
	raw, ok := sf.doc.get("mcpServers")
	if !ok || string(trimSpace(raw)) == "null" {
		return newObject(), nil
	}
	o, err := parseObject(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: \"mcpServers\" is not an object", sf.shown)
	}
	return o, nil
}

func jsonState(sf settingsFile, mf mcpFile) string {
	servers, err := serversOf(sf)
	if err != nil {
		return StateNotInstalled
	}
	cur, ok := servers.get(MCPServer)
	switch {
	case !ok || !isRallyServer(cur):
		return StateNotInstalled
	case canonical(cur) == canonical(mf.entry):
		return StateInstalled
	}
	return StateOutdated
}

// jsonInstall returns the file with rally's server, or nil when it is
// there already.
func jsonInstall(sf settingsFile, mf mcpFile) ([]byte, error) {
	servers, err := serversOf(sf)
	if err != nil {
		return nil, err
	}
	if cur, ok := servers.get(MCPServer); ok {
		if canonical(cur) == canonical(mf.entry) {
			return nil, nil
		}
		if !isRallyServer(cur) {
			return nil, fmt.Errorf("%s: mcpServers.%s is another program's server; rally leaves it alone", sf.shown, MCPServer)
		}
	}
	servers.set(MCPServer, mf.entry)
	sf.doc.set("mcpServers", servers.compact())
	indent, nl := style(sf.content)
	return sf.doc.format(indent, nl), nil
}

// jsonRemove returns the file without rally's server, or nil when it is
// not there.
func jsonRemove(sf settingsFile) ([]byte, error) {
	servers, err := serversOf(sf)
	if err != nil {
		return nil, err
	}
	cur, ok := servers.get(MCPServer)
	if !ok || !isRallyServer(cur) {
		return nil, nil
	}
	servers.del(MCPServer)
	if servers.empty() {
		sf.doc.del("mcpServers")
	} else {
		sf.doc.set("mcpServers", servers.compact())
	}
	if sf.doc.empty() {
		return []byte{}, nil
	}
	indent, nl := style(sf.content)
	return sf.doc.format(indent, nl), nil
}

// claudeApproval reads whether Claude Code may start the project's rally
// server: "on", "off", or "" when it will ask. Its settings files say so,
// and so does ~/.claude.json once the user answered.
func claudeApproval(top, home string) string {
	type choice struct {
		All      bool     `json:"enableAllProjectMcpServers"`
		Enabled  []string `json:"enabledMcpjsonServers"`
		Disabled []string `json:"disabledMcpjsonServers"`
	}
	var choices []choice
	for _, f := range []string{filepath.Join(top, ".claude", "settings.local.json"), filepath.Join(top, ".claude", "settings.json"), filepath.Join(home, ".claude", "settings.json")} {
		var c choice
		if b, err := os.ReadFile(f); err == nil && json.Unmarshal(b, &c) == nil {
			choices = append(choices, c)
		}
	}
	if b, err := os.ReadFile(filepath.Join(home, ".claude.json")); err == nil {
		var cfg struct {
			Projects map[string]choice `json:"projects"`
		}
		if json.Unmarshal(b, &cfg) == nil {
			if c, ok := cfg.Projects[top]; ok {
				choices = append(choices, c)
			}
		}
	}
	for _, c := range choices {
		if slices.Contains(c.Disabled, MCPServer) {
			return "off"
		}
	}
	for _, c := range choices {
		if c.All || slices.Contains(c.Enabled, MCPServer) {
			return "on"
		}
	}
	return ""
}
