// Package mcpserver serves rally's commands as Model Context Protocol tools
// on a stream (stdio for `git rally mcp`), with the official Go SDK.
//
// It owns what an agent host sees: the tool names, their argument schemas
// and descriptions, and the shape of answers (the command's JSON, every
// string sanitized, a line marking other agents' text as untrusted;
// failures as tool errors carrying the §7 error object). It owns no rule:
// each tool call becomes the argv of the command that does the same thing,
// and a Runner (the command line, in-process) runs it as the server's one
// identity. No argument names an identity, so no call can act as another
// tool.
package mcpserver
