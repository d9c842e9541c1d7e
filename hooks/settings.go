package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/git-rally/git-rally/worktree"
)

// entry is one matcher group rally adds to a host's hooks file.
type entry struct {
	event string
	group json.RawMessage
}

// hostFile says where a host keeps project hooks and what rally adds.
type hostFile struct {
	path    string // relative to the worktree's top level
	entries []entry
	flat    bool // Cursor: handlers sit in the event's array, no matcher groups
}

// The entries below are what hosts see and, for Codex, approve by hash:
// their bytes change between rally versions only when they must, since
// Codex then asks for its approval again. They changed once: from
// `git rally hook ...` to `git-rally hook ...` (install upgrades the old
// lines in place; status calls them outdated; uninstall removes both).
var hostFiles = sync.OnceValue(func() map[string]hostFile {
	return map[string]hostFile{
		Claude: {
			path: ".claude/settings.json",
			entries: []entry{
				{"SessionStart", json.RawMessage(`{"hooks":[{"type":"command","command":"git-rally hook claude session-start","timeout":10}]}`)},
				{"PreToolUse", json.RawMessage(`{"matcher":"Edit|Write|MultiEdit|NotebookEdit|Bash","hooks":[{"type":"command","command":"git-rally hook claude pre-tool-use","timeout":10}]}`)},
				{"UserPromptSubmit", json.RawMessage(`{"hooks":[{"type":"command","command":"git-rally hook claude user-prompt-submit","timeout":10}]}`)},
				{"SessionEnd", json.RawMessage(`{"hooks":[{"type":"command","command":"git-rally hook claude session-end","timeout":10}]}`)},
				// What the agent is doing (SPEC §13): a tool ran, it waits for
				// a person, its turn ended (and queued messages go over).
				{"PostToolUse", json.RawMessage(`{"hooks":[{"type":"command","command":"git-rally hook claude post-tool-use","timeout":10}]}`)},
				{"PermissionRequest", json.RawMessage(`{"hooks":[{"type":"command","command":"git-rally hook claude permission-request","timeout":10}]}`)},
				{"Notification", json.RawMessage(`{"hooks":[{"type":"command","command":"git-rally hook claude notification","timeout":10}]}`)},
				{"Stop", json.RawMessage(`{"hooks":[{"type":"command","command":"git-rally hook claude stop","timeout":30}]}`)},
			},
		},
		Codex: {
			path: ".codex/hooks.json",
			entries: []entry{
				{"SessionStart", json.RawMessage(`{"hooks":[{"type":"command","command":"git-rally hook codex session-start","timeout":10}]}`)},
				{"PreToolUse", json.RawMessage(`{"matcher":"^(apply_patch|Bash|shell|local_shell|exec_command)$","hooks":[{"type":"command","command":"git-rally hook codex pre-tool-use","timeout":10}]}`)},
				{"UserPromptSubmit", json.RawMessage(`{"hooks":[{"type":"command","command":"git-rally hook codex user-prompt-submit","timeout":10}]}`)},
				{"SessionEnd", json.RawMessage(`{"hooks":[{"type":"command","command":"git-rally hook codex session-end","timeout":3}]}`)},
				{"PostToolUse", json.RawMessage(`{"hooks":[{"type":"command","command":"git-rally hook codex post-tool-use","timeout":10}]}`)},
				{"PermissionRequest", json.RawMessage(`{"hooks":[{"type":"command","command":"git-rally hook codex permission-request","timeout":10}]}`)},
				{"Stop", json.RawMessage(`{"hooks":[{"type":"command","command":"git-rally hook codex stop","timeout":30}]}`)},
			},
		},
		Gemini: {
			path: ".gemini/settings.json",
			entries: []entry{
				{"SessionStart", json.RawMessage(`{"hooks":[{"name":"git-rally-session-start","type":"command","command":"git-rally hook gemini session-start","timeout":10000}]}`)},
				{"BeforeTool", json.RawMessage(`{"matcher":"write_file|replace|run_shell_command","hooks":[{"name":"git-rally-before-tool","type":"command","command":"git-rally hook gemini before-tool","timeout":10000}]}`)},
				{"AfterTool", json.RawMessage(`{"matcher":"write_file|replace|run_shell_command","hooks":[{"name":"git-rally-after-tool","type":"command","command":"git-rally hook gemini after-tool","timeout":10000}]}`)},
				{"BeforeAgent", json.RawMessage(`{"hooks":[{"name":"git-rally-before-agent","type":"command","command":"git-rally hook gemini before-agent","timeout":10000}]}`)},
				{"SessionEnd", json.RawMessage(`{"hooks":[{"name":"git-rally-session-end","type":"command","command":"git-rally hook gemini session-end","timeout":10000}]}`)},
				{"Notification", json.RawMessage(`{"hooks":[{"name":"git-rally-notification","type":"command","command":"git-rally hook gemini notification","timeout":10000}]}`)},
				{"AfterAgent", json.RawMessage(`{"hooks":[{"name":"git-rally-after-agent","type":"command","command":"git-rally hook gemini after-agent","timeout":30000}]}`)},
			},
		},
		// Cursor's entries are flat: {"command": ...} in the event's array,
		// beside a top-level "version": 1.
		Cursor: {
			path: ".cursor/hooks.json",
			flat: true,
			entries: []entry{
				{"sessionStart", json.RawMessage(`{"command":"git-rally hook cursor session-start"}`)},
				{"preToolUse", json.RawMessage(`{"command":"git-rally hook cursor pre-tool-use"}`)},
				{"beforeShellExecution", json.RawMessage(`{"command":"git-rally hook cursor before-shell-execution"}`)},
				{"afterFileEdit", json.RawMessage(`{"command":"git-rally hook cursor after-file-edit"}`)},
				{"sessionEnd", json.RawMessage(`{"command":"git-rally hook cursor session-end"}`)},
			},
		},
	}
})

// hookPrefix starts every handler rally installs: the binary itself, not
// `git rally`, whose git process costs a few milliseconds before every
// tool call. oldHookPrefix is how versions before that wrote them.
const (
	hookPrefix    = "git-rally hook "
	oldHookPrefix = "git rally hook "
)

// isRallyCommand recognises rally's handlers by their command line, in
// the form of this version and of the ones before.
func isRallyCommand(cmd string) bool {
	cmd = strings.TrimSpace(cmd)
	return strings.HasPrefix(cmd, hookPrefix) || strings.HasPrefix(cmd, oldHookPrefix)
}

func (hf hostFile) events() []string {
	out := make([]string, len(hf.entries))
	for i, e := range hf.entries {
		out[i] = e.event
	}
	return out
}

// settingsFile is a host's hooks file as read from disk.
type settingsFile struct {
	path    string // resolved through symlinks when it exists
	shown   string
	exists  bool
	content []byte
	mode    os.FileMode
	doc     *object
}

// readWorktreeFile reads a host's file at rel in the worktree (through a
// symlink to where it really is), or notes that it does not exist yet.
// what names the file's contents in the error of a bare repository.
func readWorktreeFile(r *worktree.Repo, rel, what string) (settingsFile, error) {
	if r.WorkTree == "" {
		return settingsFile{}, fmt.Errorf("%s live in a worktree; this repository is bare", what)
	}
	sf := settingsFile{path: filepath.Join(r.WorkTree, filepath.FromSlash(rel)), mode: 0o644}
	sf.shown = display(r, sf.path)
	if real, err := filepath.EvalSymlinks(sf.path); err == nil {
		sf.path = real
	}
	if fi, err := os.Stat(sf.path); err == nil {
		b, err := os.ReadFile(sf.path)
		if err != nil {
			return sf, err
		}
		sf.exists, sf.content, sf.mode = true, b, fi.Mode().Perm()
	}
	return sf, nil
}

func readSettings(r *worktree.Repo, host string) (hostFile, settingsFile, error) {
	hf := hostFiles()[host]
	sf, err := readWorktreeFile(r, hf.path, host+" hooks")
	if err != nil {
		return hf, sf, err
	}
	doc, err := parseObject(sf.content)
	if err != nil {
		return hf, sf, fmt.Errorf("%s is not a JSON object rally can merge into: %w", sf.shown, err)
	}
	sf.doc = doc
	return hf, sf, nil
}

// hooksOf returns the document's "hooks" object.
func hooksOf(sf settingsFile) (*object, error) {
	raw, ok := sf.doc.get("hooks")
	if !ok || string(bytes.TrimSpace(raw)) == "null" {
		return newObject(), nil
	}
	h, err := parseObject(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: \"hooks\" is not an object", sf.shown)
	}
	return h, nil
}

func groupsOf(h *object, event string) ([]json.RawMessage, error) {
	raw, ok := h.get(event)
	if !ok || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	var gs []json.RawMessage
	if err := json.Unmarshal(raw, &gs); err != nil {
		return nil, fmt.Errorf("hooks.%s is not an array", event)
	}
	return gs, nil
}

func arrayOf(vs []json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, v := range vs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(v)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// dropRally removes rally's handlers from matcher groups, and groups left
// with no handler. Groups it cannot read are kept as they are.
func dropRally(gs []json.RawMessage) ([]json.RawMessage, bool) {
	var out []json.RawMessage
	removed := false
	for _, g := range gs {
		kept, had := dropRallyGroup(g)
		removed = removed || had
		if kept != nil {
			out = append(out, kept)
		}
	}
	return out, removed
}

// dropRallyGroup is one matcher group without rally's handlers (nil when
// none is left), and whether it had any.
func dropRallyGroup(g json.RawMessage) (json.RawMessage, bool) {
	obj, err := parseObject(g)
	if err != nil {
		return g, false
	}
	var flat struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(g, &flat) == nil && isRallyCommand(flat.Command) {
		return nil, true // a flat (Cursor) entry of rally's
	}
	raw, _ := obj.get("hooks")
	var hs []json.RawMessage
	if json.Unmarshal(raw, &hs) != nil {
		return g, false
	}
	var keep []json.RawMessage
	for _, h := range hs {
		var cmd struct {
			Command string `json:"command"`
		}
		if json.Unmarshal(h, &cmd) == nil && isRallyCommand(cmd.Command) {
			continue
		}
		keep = append(keep, h)
	}
	switch {
	case len(keep) == len(hs):
		return g, false
	case len(keep) == 0:
		return nil, true
	}
	obj.set("hooks", arrayOf(keep))
	return obj.compact(), true
}

// placeGroup is an event's groups with rally's handlers replaced by want:
// at the place of the first group that held one of rally's handlers (so an
// upgrade from an older version's entry keeps the order, and the index
// Codex keys its approval by), else at the end. A nil want only drops.
func placeGroup(gs []json.RawMessage, want json.RawMessage) []json.RawMessage {
	var out []json.RawMessage
	placed := want == nil
	for _, g := range gs {
		kept, had := dropRallyGroup(g)
		if had && !placed {
			out, placed = append(out, want), true
		}
		if kept != nil {
			out = append(out, kept)
		}
	}
	if !placed {
		out = append(out, want)
	}
	return out
}

// placeRally puts rally's entries into a hooks object as this version
// writes them: one group per event where rally's was, no handler of
// rally's anywhere else (an older version's, a duplicate, an event rally
// no longer uses). It says whether anything changed.
func placeRally(h *object, hf hostFile) (bool, error) {
	want := map[string]json.RawMessage{}
	for _, e := range hf.entries {
		want[e.event] = e.group
	}
	changed := false
	for _, ev := range append([]string(nil), h.keys...) {
		gs, err := groupsOf(h, ev)
		if err != nil {
			if want[ev] != nil {
				return false, err
			}
			continue // not rally's event, and not an array: left alone
		}
		out := placeGroup(gs, want[ev])
		if canonical(arrayOf(out)) == canonical(arrayOf(gs)) {
			continue
		}
		changed = true
		if len(out) == 0 {
			h.del(ev)
		} else {
			h.set(ev, arrayOf(out))
		}
	}
	for _, e := range hf.entries {
		if _, ok := h.get(e.event); !ok {
			h.set(e.event, arrayOf([]json.RawMessage{e.group}))
			changed = true
		}
	}
	return changed, nil
}

// holdsRally says whether a file's bytes hold any of rally's entries:
// hook handlers of this version or an older one, or rally's MCP server
// (toml: Codex's config.toml).
func holdsRally(content []byte, toml bool) bool {
	if toml {
		lines := splitLines(content)
		start, end := tomlSection(lines)
		return start >= 0 && tomlRallyCmd().MatchString(strings.Join(lines[start:end], ""))
	}
	doc, err := parseObject(content)
	if err != nil {
		return false
	}
	sf := settingsFile{doc: doc}
	if h, err := hooksOf(sf); err == nil {
		for _, ev := range h.keys {
			gs, _ := groupsOf(h, ev)
			if _, had := dropRally(gs); had {
				return true
			}
		}
	}
	servers, err := serversOf(sf)
	if err != nil {
		return false
	}
	cur, ok := servers.get(MCPServer)
	return ok && isRallyServer(cur)
}

// throughGit says whether any of rally's handlers in h runs `git rally
// hook` (versions before rally called git-rally directly).
func throughGit(h *object) bool {
	for _, ev := range h.keys {
		gs, _ := groupsOf(h, ev)
		for _, g := range gs {
			var grp struct {
				Command string `json:"command"`
				Hooks   []struct {
					Command string `json:"command"`
				} `json:"hooks"`
			}
			if json.Unmarshal(g, &grp) != nil {
				continue
			}
			cmds := []string{grp.Command}
			for _, hd := range grp.Hooks {
				cmds = append(cmds, hd.Command)
			}
			for _, c := range cmds {
				if strings.HasPrefix(strings.TrimSpace(c), oldHookPrefix) {
					return true
				}
			}
		}
	}
	return false
}

func (sf settingsFile) result(r *worktree.Repo, hf hostFile, host string) Result {
	res := Result{Host: host, Path: sf.shown, State: StateNotInstalled, Events: hf.events()}
	h, err := hooksOf(sf)
	if err != nil {
		res.Note = err.Error()
		return res
	}
	some := false
	for _, ev := range h.keys {
		gs, _ := groupsOf(h, ev)
		if _, had := dropRally(gs); had {
			some = true
		}
	}
	old := throughGit(h)
	// Installed is what install would leave as it is.
	changed, err := placeRally(h, hf)
	switch {
	case err == nil && !changed:
		res.State = StateInstalled
		res.Problems = hostProblems(r, host, sf)
	case some && old:
		res.State, res.Note = StateOutdated, "rally's entries run `git rally hook` through git; `git rally hooks install --"+host+"` changes them to run git-rally directly"
		if host == Codex {
			res.Note += " (Codex then skips them until they are approved again in /hooks)"
		}
	case some:
		res.State, res.Note = StateOutdated, "some of rally's entries are missing or changed; `git rally hooks install --"+host+"` puts them right"
	}
	return res
}

func installSettings(r *worktree.Repo, host string) (Result, error) {
	hf, sf, err := readSettings(r, host)
	if err != nil {
		return Result{}, err
	}
	h, err := hooksOf(sf)
	if err != nil {
		return Result{}, err
	}
	upgraded := throughGit(h)
	changed, err := placeRally(h, hf)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", sf.shown, err)
	}
	if !changed {
		return sf.result(r, hf, host), nil
	}
	if _, ok := sf.doc.get("version"); hf.flat && !ok {
		sf.doc.set("version", json.RawMessage("1"))
	}
	sf.doc.set("hooks", h.compact())
	indent, nl := style(sf.content)
	out := sf.doc.format(indent, nl)

	if err := writeTracked(r, sf, out, false); err != nil {
		return Result{}, err
	}
	sf.exists, sf.content = true, out
	res := sf.result(r, hf, host)
	res.Changed = true
	if upgraded && host == Codex {
		// Codex's approvals of the old lines stay in its config.toml
		// under the same keys, but no longer match: status cannot tell.
		res.Problems = append(res.Problems, Problem{
			Problem: "rally's hooks changed from `git rally hook` to `git-rally hook`: Codex skips them until you approve them again",
			Fix:     "cd " + shellQuote(r.WorkTree) + " && codex   # then /hooks and trust rally's hooks (codex exec: --dangerously-bypass-hook-trust)",
		})
	}
	return res, nil
}

func uninstallSettings(r *worktree.Repo, host string) (Result, error) {
	hf, sf, err := readSettings(r, host)
	if err != nil {
		return Result{}, err
	}
	res := Result{Host: host, Path: sf.shown, State: StateNotInstalled, Events: hf.events()}
	rec := loadRecord(r, sf.path)
	mcpLeft := mcpIn(host, sf) // Gemini's MCP server shares the file: its uninstall needs the record
	if !mcpLeft {
		defer dropRecord(r, sf.path)
	}
	if rec != nil && !mcpLeft && sf.exists && digest(sf.content) == rec.Wrote && !(rec.Existed && holdsRally(rec.Original, false)) {
		// Untouched since rally wrote it: put back the very bytes.
		if rec.Existed {
			err = writeAtomic(sf.path, rec.Original, rec.Mode)
		} else {
			err = os.Remove(sf.path)
			removeDirs(rec.MadeDirs)
		}
		res.Changed = true
		return res, err
	}
	h, err := hooksOf(sf)
	if err != nil {
		return Result{}, err
	}
	removed := false
	for _, ev := range append([]string(nil), h.keys...) {
		gs, err := groupsOf(h, ev)
		if err != nil {
			continue
		}
		kept, did := dropRally(gs)
		if !did {
			continue
		}
		removed = true
		if len(kept) == 0 {
			h.del(ev)
		} else {
			h.set(ev, arrayOf(kept))
		}
	}
	if !removed {
		return res, nil
	}
	if h.empty() {
		sf.doc.del("hooks")
	} else {
		sf.doc.set("hooks", h.compact())
	}
	res.Changed = true
	if hf.flat && len(sf.doc.keys) == 1 && sf.doc.keys[0] == "version" {
		sf.doc.del("version") // rally's own line: nothing else is left
	}
	if sf.doc.empty() && (rec == nil || !rec.Existed) {
		if err := os.Remove(sf.path); err != nil {
			return res, err
		}
		if rec != nil {
			removeDirs(rec.MadeDirs)
		}
		return res, nil
	}
	indent, nl := style(sf.content)
	out := sf.doc.format(indent, nl)
	if mcpLeft {
		keepRecord(r, rec, sf.content, out)
	}
	return res, writeAtomic(sf.path, out, sf.mode)
}

func statusSettings(r *worktree.Repo, host string) (Result, error) {
	hf, sf, err := readSettings(r, host)
	if err != nil {
		return Result{}, err
	}
	return sf.result(r, hf, host), nil
}
