package mcpserver

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

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
