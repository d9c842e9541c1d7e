package hooks

import (
	"bytes"
	"encoding/json"
	"strings"
)

// agentHost is how one agent host names things and wants its answers.
type agentHost struct {
	name string
	tool string // identity prefix: <tool>:<session tag>
	// host event names for rally's moments; "" where the host has none
	start, preTool, prompt, end, afterTool, shell string
	// activity events (SPEC §13): after a tool, a permission prompt, a
	// notification, the turn's end
	postTool, permission, notification, stop string
}

var agentHosts = map[string]agentHost{
	Claude: {name: Claude, tool: "claude_code", start: "SessionStart", preTool: "PreToolUse", prompt: "UserPromptSubmit", end: "SessionEnd",
		postTool: "PostToolUse", permission: "PermissionRequest", notification: "Notification", stop: "Stop"},
	Codex: {name: Codex, tool: "codex", start: "SessionStart", preTool: "PreToolUse", prompt: "UserPromptSubmit", end: "SessionEnd",
		postTool: "PostToolUse", permission: "PermissionRequest", stop: "Stop"},
	Gemini: {name: Gemini, tool: "gemini", start: "SessionStart", preTool: "BeforeTool", prompt: "BeforeAgent", end: "SessionEnd", afterTool: "AfterTool",
		notification: "Notification", stop: "AfterAgent"},
	Cursor: {name: Cursor, tool: "cursor", start: "sessionStart", preTool: "preToolUse", prompt: "beforeSubmitPrompt", end: "sessionEnd",
		afterTool: "afterFileEdit", shell: "beforeShellExecution"},
}

// quiet is "allow, nothing to say": no output at all, except for Gemini
// CLI, which parses stdout as JSON and takes {} as nothing, and Cursor,
// whose documented answers are all JSON objects.
func (h agentHost) quiet() []byte {
	if h.name == Gemini || h.name == Cursor {
		return []byte("{}\n")
	}
	return nil
}

func encode(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return b.Bytes()
}

// shown escapes what a hook puts in front of a model or a person: no text
// of rally's answers, its own or a peer's, can open or close a tag in the
// host's prompt (`</system-reminder>`), whatever the host does with it.
func shown(s string) string {
	return strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(s)
}

type specific struct {
	HookEventName            string          `json:"hookEventName"`
	AdditionalContext        string          `json:"additionalContext,omitempty"`
	PermissionDecision       string          `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string          `json:"permissionDecisionReason,omitempty"`
	ToolInput                json.RawMessage `json:"tool_input,omitempty"` // Gemini CLI: merged into the call's arguments
}

type envelope struct {
	Decision      string    `json:"decision,omitempty"`
	Reason        string    `json:"reason,omitempty"`
	SystemMessage string    `json:"systemMessage,omitempty"`
	Specific      *specific `json:"hookSpecificOutput,omitempty"`
}

// cursorAnswer is Cursor's flat answer: permission events take
// permission, user_message and agent_message; sessionStart takes
// additional_context and env.
type cursorAnswer struct {
	Permission        string            `json:"permission,omitempty"`
	UserMessage       string            `json:"user_message,omitempty"`
	AgentMessage      string            `json:"agent_message,omitempty"`
	AdditionalContext string            `json:"additional_context,omitempty"`
	Env               map[string]string `json:"env,omitempty"`
}

// context adds text to the agent's context at event. Only fields every
// host knows are used: Codex rejects an answer with unknown keys.
func (h agentHost) context(event, text string) []byte {
	if h.name == Cursor {
		return encode(cursorAnswer{AdditionalContext: shown(text)})
	}
	return encode(envelope{Specific: &specific{HookEventName: event, AdditionalContext: shown(text)}})
}

// deny refuses a tool call, with the reason the agent sees. It never says
// "allow": that would skip the user's own permission prompt.
func (h agentHost) deny(reason string) []byte {
	reason = shown(reason)
	switch h.name {
	case Gemini:
		return encode(envelope{Decision: "deny", Reason: reason})
	case Cursor:
		return encode(cursorAnswer{Permission: "deny", UserMessage: firstLine(reason), AgentMessage: reason})
	}
	return encode(envelope{Specific: &specific{HookEventName: h.preTool, PermissionDecision: "deny", PermissionDecisionReason: reason}})
}

// advise lets a tool call go ahead and tells the agent (reason) and the
// user (summary) what rally found. Gemini CLI's BeforeTool gives the model
// nothing but a denial: there the user sees the reason now and the model
// reads it after the call, from the AfterTool hook (afterAdvice).
func (h agentHost) advise(reason, summary string) []byte {
	reason, summary = shown(reason), shown(summary)
	switch h.name {
	case Gemini:
		return encode(envelope{SystemMessage: reason})
	case Cursor:
		return encode(cursorAnswer{UserMessage: summary, AgentMessage: reason})
	}
	return encode(envelope{SystemMessage: summary, Specific: &specific{HookEventName: h.preTool, AdditionalContext: reason}})
}

// afterAdvice is what a host's after-tool event gives the model.
func (h agentHost) afterAdvice(reason string) []byte {
	if h.name != Gemini {
		return h.quiet()
	}
	return encode(envelope{Specific: &specific{HookEventName: h.afterTool, AdditionalContext: shown(reason)}})
}

// block answers a turn's end with text the agent goes on with: Claude
// Code's and Codex's Stop and Gemini CLI's AfterAgent take a block
// decision whose reason becomes the agent's next input.
func (h agentHost) block(text string) []byte {
	return encode(envelope{Decision: "block", Reason: shown(text)})
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
