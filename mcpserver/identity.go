package mcpserver

import (
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Host is what the host says of itself: its name in the handshake and,
// when it names one in a call's _meta, the session the call belongs to
// (Family is the host as rally's hooks spell it, hooks.Codex).
type Host struct {
	Client  string
	Family  string
	Session string
}

// hostOf reads a call's host. Codex clears its MCP servers' environment
// but puts its session id in every tools/call, under
// _meta["x-codex-turn-metadata"].session_id (seen from 0.171): the id its
// hooks name the session after.
func hostOf(req *mcp.CallToolRequest) Host {
	var h Host
	if req.Session != nil {
		if p := req.Session.InitializeParams(); p != nil && p.ClientInfo != nil {
			h.Client = p.ClientInfo.Name
		}
	}
	if req.Params == nil {
		return h
	}
	if turn, ok := req.Params.GetMeta()["x-codex-turn-metadata"].(map[string]any); ok {
		if id, ok := turn["session_id"].(string); ok && id != "" {
			h.Family, h.Session = "codex", id
		}
	}
	return h
}

// ClientTool is the identity of last resort, for a host that says only its
// name in the handshake: the host's family as rally's hooks spell it, and
// a tag fixed for the server's life ("codex:mcp-1a2b3c4d").
func ClientTool(client, tag string) string {
	name := strings.ToLower(client)
	family := "mcp"
	for _, f := range []struct{ has, family string }{
		{"claude", "claude_code"}, {"codex", "codex"}, {"gemini", "gemini"}, {"cursor", "cursor"}, {"opencode", "opencode"},
	} {
		if strings.Contains(name, f.has) {
			family = f.family
			break
		}
	}
	return family + ":mcp-" + tag
}
