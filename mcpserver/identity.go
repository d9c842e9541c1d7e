package mcpserver

import "strings"

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
