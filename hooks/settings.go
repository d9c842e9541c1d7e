package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

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
// their bytes must stay the same from one rally version to the next.
var hostFiles = map[string]hostFile{
	Claude: {
		path: ".claude/settings.json",
		entries: []entry{
			{"SessionStart", json.RawMessage(`{"hooks":[{"type":"command","command":"git rally hook claude session-start","timeout":10}]}`)},
			{"PreToolUse", json.RawMessage(`{"matcher":"Edit|Write|MultiEdit|NotebookEdit|Bash","hooks":[{"type":"command","command":"git rally hook claude pre-tool-use","timeout":10}]}`)},
			{"UserPromptSubmit", json.RawMessage(`{"hooks":[{"type":"command","command":"git rally hook claude user-prompt-submit","timeout":10}]}`)},
			{"SessionEnd", json.RawMessage(`{"hooks":[{"type":"command","command":"git rally hook claude session-end","timeout":10}]}`)},
		},
	},
	Codex: {
		path: ".codex/hooks.json",
		entries: []entry{
			{"SessionStart", json.RawMessage(`{"hooks":[{"type":"command","command":"git rally hook codex session-start","timeout":10}]}`)},
			{"PreToolUse", json.RawMessage(`{"matcher":"^(apply_patch|Bash|shell|local_shell|exec_command)$","hooks":[{"type":"command","command":"git rally hook codex pre-tool-use","timeout":10}]}`)},
			{"UserPromptSubmit", json.RawMessage(`{"hooks":[{"type":"command","command":"git rally hook codex user-prompt-submit","timeout":10}]}`)},
			{"SessionEnd", json.RawMessage(`{"hooks":[{"type":"command","command":"git rally hook codex session-end","timeout":3}]}`)},
		},
	},
	Gemini: {
		path: ".gemini/settings.json",
		entries: []entry{
			{"SessionStart", json.RawMessage(`{"hooks":[{"name":"git-rally-session-start","type":"command","command":"git rally hook gemini session-start","timeout":10000}]}`)},
			{"BeforeTool", json.RawMessage(`{"matcher":"write_file|replace|run_shell_command","hooks":[{"name":"git-rally-before-tool","type":"command","command":"git rally hook gemini before-tool","timeout":10000}]}`)},
			{"AfterTool", json.RawMessage(`{"matcher":"write_file|replace|run_shell_command","hooks":[{"name":"git-rally-after-tool","type":"command","command":"git rally hook gemini after-tool","timeout":10000}]}`)},
			{"BeforeAgent", json.RawMessage(`{"hooks":[{"name":"git-rally-before-agent","type":"command","command":"git rally hook gemini before-agent","timeout":10000}]}`)},
			{"SessionEnd", json.RawMessage(`{"hooks":[{"name":"git-rally-session-end","type":"command","command":"git rally hook gemini session-end","timeout":10000}]}`)},
		},
	},
	// Cursor's entries are flat: {"command": ...} in the event's array,
	// beside a top-level "version": 1.
	Cursor: {
		path: ".cursor/hooks.json",
		flat: true,
		entries: []entry{
			{"sessionStart", json.RawMessage(`{"command":"git rally hook cursor session-start"}`)},
			{"preToolUse", json.RawMessage(`{"command":"git rally hook cursor pre-tool-use"}`)},
			{"beforeShellExecution", json.RawMessage(`{"command":"git rally hook cursor before-shell-execution"}`)},
			{"afterFileEdit", json.RawMessage(`{"command":"git rally hook cursor after-file-edit"}`)},
			{"sessionEnd", json.RawMessage(`{"command":"git rally hook cursor session-end"}`)},
		},
	},
}

// isRallyCommand recognises rally's handlers by their command line.
func isRallyCommand(cmd string) bool {
	cmd = strings.TrimSpace(cmd)
	return strings.HasPrefix(cmd, "git rally hook ") || strings.HasPrefix(cmd, "git-rally hook ")
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
	hf := hostFiles[host]
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
		obj, err := parseObject(g)
		if err != nil {
			out = append(out, g)
			continue
		}
		var flat struct {
			Command string `json:"command"`
		}
		if json.Unmarshal(g, &flat) == nil && isRallyCommand(flat.Command) {
			removed = true // a flat (Cursor) entry of rally's
			continue
		}
		raw, _ := obj.get("hooks")
		var hs []json.RawMessage
		if json.Unmarshal(raw, &hs) != nil {
			out = append(out, g)
			continue
		}
		var keep []json.RawMessage
		for _, h := range hs {
			var cmd struct {
				Command string `json:"command"`
			}
			if json.Unmarshal(h, &cmd) == nil && isRallyCommand(cmd.Command) {
				removed = true
				continue
			}
			keep = append(keep, h)
		}
		switch {
		case len(keep) == len(hs):
			out = append(out, g)
		case len(keep) > 0:
			obj.set("hooks", arrayOf(keep))
			out = append(out, obj.compact())
		}
	}
	return out, removed
}

func hasGroup(gs []json.RawMessage, want json.RawMessage) bool {
	w := canonical(want)
	for _, g := range gs {
		if canonical(g) == w {
			return true
		}
	}
	return false
}

func hasRally(gs []json.RawMessage) bool {
	_, removed := dropRally(gs)
	return removed
}

func (sf settingsFile) result(r *worktree.Repo, hf hostFile, host string) Result {
	res := Result{Host: host, Path: sf.shown, State: StateNotInstalled, Events: hf.events()}
	h, err := hooksOf(sf)
	if err != nil {
		res.Note = err.Error()
		return res
	}
	all, some := true, false
	for _, e := range hf.entries {
		gs, _ := groupsOf(h, e.event)
		if !hasGroup(gs, e.group) {
			all = false
		}
	}
	for _, ev := range h.keys {
		gs, _ := groupsOf(h, ev)
		if hasRally(gs) {
			some = true
		}
	}
	switch {
	case all:
		res.State = StateInstalled
		res.Problems = hostProblems(r, host, sf)
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
	changed := false
	for _, e := range hf.entries {
		gs, err := groupsOf(h, e.event)
		if err != nil {
			return Result{}, fmt.Errorf("%s: %w", sf.shown, err)
		}
		if hasGroup(gs, e.group) {
			continue
		}
		gs, _ = dropRally(gs)
		h.set(e.event, arrayOf(append(gs, e.group)))
		changed = true
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

	rec := loadRecord(r, sf.path)
	switch {
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
		return Result{}, err
	}
	if err := writeAtomic(sf.path, out, sf.mode); err != nil {
		return Result{}, fmt.Errorf("writing %s: %w", sf.shown, err)
	}
	if rec != nil {
		rec.Wrote = digest(out)
		rec.MadeDirs = append(rec.MadeDirs, made...)
		saveRecord(r, rec)
	}
	sf.exists, sf.content = true, out
	res := sf.result(r, hf, host)
	res.Changed = true
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
	if rec != nil && !mcpLeft && sf.exists && digest(sf.content) == rec.Wrote {
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
