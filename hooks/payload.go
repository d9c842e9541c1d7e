package hooks

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// payload is the part of a host's hook input rally reads. Claude Code,
// Codex and Gemini CLI share these field names.
type payload struct {
	SessionID string    `json:"session_id"`
	Cwd       string    `json:"cwd"`
	Event     string    `json:"hook_event_name"`
	Source    string    `json:"source"`
	ToolName  string    `json:"tool_name"`
	ToolInput toolInput `json:"tool_input"`
	Reason    string    `json:"reason"` // SessionEnd
	// Notification: Claude Code's permission_prompt, idle_prompt,
	// elicitation_dialog...; Gemini CLI's ToolPermission.
	NotificationType string `json:"notification_type"`

	// Cursor names these differently and sends a shell command flat.
	ConversationID string   `json:"conversation_id"`
	WorkspaceRoots []string `json:"workspace_roots"`
	Command        string   `json:"command"`
	FilePath       string   `json:"file_path"`

	badInput bool // tool_input is not what rally reads: no paths from it
}

// toolInput is the part of a tool call's arguments rally reads. It is
// decoded with the rest of the payload, in one pass: a Write carries the
// whole file, which rally reads past once, never again.
type toolInput struct {
	FilePath     string `json:"file_path"`
	NotebookPath string `json:"notebook_path"`
	Path         string `json:"path"`
	Command      any    `json:"command"` // a script, or an argv
}

// parsePayload reads the host's JSON; anything else is no payload.
func parsePayload(b []byte) (payload, bool) {
	var p payload
	if err := json.Unmarshal(b, &p); err != nil {
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) || te.Field != "tool_input" && !strings.HasPrefix(te.Field, "tool_input.") {
			return payload{}, false
		}
		// Arguments of a shape rally does not know: the call is
		// allowed unchecked, as a tool rally does not know is.
		p.ToolInput, p.badInput = toolInput{}, true
	}
	if p.SessionID == "" {
		p.SessionID = p.ConversationID
	}
	if p.Cwd == "" && len(p.WorkspaceRoots) > 0 {
		p.Cwd = p.WorkspaceRoots[0]
	}
	return p, true
}

// maxPaths bounds the paths one tool call is checked for.
const maxPaths = 256

// editPaths returns the paths a tool call is about to write, as the host
// gave them (absolute or relative to the payload's cwd). A tool rally does
// not know, or a shell command that writes nothing rally can read
// (ShellPaths), gives none: it is allowed unchecked.
func editPaths(host string, p payload) []string {
	if p.badInput {
		return nil
	}
	in := p.ToolInput
	if p.Command != "" && in.Command == nil {
		in.Command = p.Command // Cursor's beforeShellExecution
	}
	var out []string
	switch host + "/" + p.ToolName {
	case Claude + "/Edit", Claude + "/Write", Claude + "/MultiEdit", Gemini + "/write_file", Gemini + "/replace":
		out = []string{in.FilePath}
	case Claude + "/NotebookEdit":
		out = []string{in.NotebookPath}
		if in.NotebookPath == "" {
			out = []string{in.FilePath}
		}
	case Cursor + "/Write", Cursor + "/StrReplace", Cursor + "/Edit", Cursor + "/Delete", Cursor + "/MultiEdit", Cursor + "/EditNotebook":
		out = []string{in.FilePath, in.Path}
	case Codex + "/apply_patch":
		if s, ok := in.Command.(string); ok {
			out = PatchPaths(s)
		}
	case Claude + "/Bash", Codex + "/Bash", Codex + "/shell", Codex + "/local_shell", Codex + "/exec_command",
		Gemini + "/run_shell_command", Cursor + "/Shell":
		if s := shellCommand(in.Command); s != "" {
			out = ShellPaths(s, func(d string) bool {
				if !filepath.IsAbs(d) {
					if p.Cwd == "" {
						return false
					}
					d = filepath.Join(p.Cwd, d)
				}
				fi, err := os.Stat(d)
				return err == nil && fi.IsDir()
			})
		}
	}
	return uniquePaths(out)
}

// shellCommand is the script a shell tool runs: a string, or an argv
// (["bash", "-lc", script] or a plain program and its arguments).
func shellCommand(c any) string {
	switch v := c.(type) {
	case string:
		return v
	case []any:
		var b strings.Builder
		for i, a := range v {
			s, ok := a.(string)
			if !ok {
				return ""
			}
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString("'" + strings.ReplaceAll(s, "'", `'\''`) + "'")
		}
		return b.String()
	}
	return ""
}

func uniquePaths(ps []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range ps {
		if p == "" || seen[p] || len(out) >= maxPaths {
			continue
		}
		seen[p] = true
		out = append(out, p)
	}
	return out
}

// PatchPaths lists the files an apply_patch body adds, updates, deletes or
// moves to, in order, from its "*** Add File:", "*** Update File:",
// "*** Delete File:" and "*** Move to:" lines.
func PatchPaths(patch string) []string {
	var out []string
	for _, line := range strings.Split(patch, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "***") {
			continue
		}
		rest := strings.TrimSpace(strings.TrimPrefix(line, "***"))
		for _, op := range []string{"Add File:", "Update File:", "Delete File:", "Move to:"} {
			if strings.HasPrefix(rest, op) {
				if p := strings.TrimSpace(strings.TrimPrefix(rest, op)); p != "" {
					out = append(out, p)
				}
				break
			}
		}
	}
	return out
}
