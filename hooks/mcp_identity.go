package hooks

// sessionEnv names, per host, the variable in which the host hands its
// session id to the MCP servers it starts (Claude Code does so since
// 2.1.154; Gemini CLI sets GEMINI_SESSION_ID for the processes it runs).
// Codex clears its MCP servers' environment and passes no session id.
var sessionEnv = []struct{ host, env string }{
	{Claude, "CLAUDE_CODE_SESSION_ID"},
	{Gemini, "GEMINI_SESSION_ID"},
}

// HostSessionTool is the identity the agent hooks give the host session
// named in the environment, so an MCP server that the host started acts
// as the same agent as its hooks (a claim taken through the server is the
// agent's own claim when its next edit is checked).
func HostSessionTool(getenv func(string) string) (string, bool) {
	for _, s := range sessionEnv {
		if id := getenv(s.env); id != "" {
			if tag := SessionTag(s.host, id); tag != "" {
				return agentHosts[s.host].tool + ":" + tag, true
			}
		}
	}
	return "", false
}
