package hooks

import (
	"bytes"
	"encoding/json"
)

// agentHost is how one agent host names things and wants its answers.
type agentHost struct {
	name string
	tool string // identity prefix: <tool>:<session tag>
	// host event names for rally's three moments
	start, preTool, prompt string
}

var agentHosts = map[string]agentHost{
	Claude: {name: Claude, tool: "claude_code", start: "SessionStart", preTool: "PreToolUse", prompt: "UserPromptSubmit"},
	Codex:  {name: Codex, tool: "codex", start: "SessionStart", preTool: "PreToolUse", prompt: "UserPromptSubmit"},
	Gemini: {name: Gemini, tool: "gemini", start: "SessionStart", preTool: "BeforeTool", prompt: "BeforeAgent"},
}

// quiet is "allow, nothing to say": no output at all, except for Gemini
// CLI, which parses stdout as JSON and takes {} as nothing.
func (h agentHost) quiet() []byte {
	if h.name == Gemini {
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

type specific struct {
	HookEventName            string `json:"hookEventName"`
	AdditionalContext        string `json:"additionalContext,omitempty"`
	PermissionDecision       string `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
}

type envelope struct {
	Decision      string    `json:"decision,omitempty"`
	Reason        string    `json:"reason,omitempty"`
	SystemMessage string    `json:"systemMessage,omitempty"`
	Specific      *specific `json:"hookSpecificOutput,omitempty"`
}

// context adds text to the agent's context at event. Only fields every
// host knows are used: Codex rejects an answer with unknown keys.
func (h agentHost) context(event, text string) []byte {
	return encode(envelope{Specific: &specific{HookEventName: event, AdditionalContext: text}})
}

// deny refuses a tool call, with the reason the agent sees. It never says
// "allow": that would skip the user's own permission prompt.
func (h agentHost) deny(reason string) []byte {
	if h.name == Gemini {
		return encode(envelope{Decision: "deny", Reason: reason})
	}
	return encode(envelope{Specific: &specific{HookEventName: h.preTool, PermissionDecision: "deny", PermissionDecisionReason: reason}})
}

// advise lets a tool call go ahead and tells the agent (reason) and the
// user (summary) what rally found. Gemini CLI's BeforeTool has no context
// field, so there the user sees the reason.
func (h agentHost) advise(reason, summary string) []byte {
	if h.name == Gemini {
		return encode(envelope{SystemMessage: reason})
	}
	return encode(envelope{SystemMessage: summary, Specific: &specific{HookEventName: h.preTool, AdditionalContext: reason}})
}
