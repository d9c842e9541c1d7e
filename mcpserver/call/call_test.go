package call

import "testing"

func TestClientTool(t *testing.T) {
	for client, want := range map[string]string{"claude-code": "claude_code:mcp-t", "codex-mcp-client": "codex:mcp-t",
		"gemini-cli-mcp-client": "gemini:mcp-t", "Cursor": "cursor:mcp-t", "": "mcp:mcp-t"} {
		if got := ClientTool(client, "t"); got != want {
			t.Errorf("ClientTool(%q) = %s, want %s", client, got, want)
		}
	}
}
