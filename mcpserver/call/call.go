// Package call is what rally's MCP server asks of rally's commands: a
// Call from a Host, run by a Runner, answered with an Outcome. It links
// no MCP SDK, so the command line can implement a Runner without the
// SDK's package initialisation in every hook and claim (mcpserver has the
// SDK, and aliases these types).
package call

import (
	"context"
	"encoding/json"
	"strings"
)

// Outcome is what one command did.
type Outcome struct {
	Stdout []byte // the command's JSON
	Stderr []byte // notes and warnings (git-rally: note: ...)
	Exit   int
	// Error is the §7 error object ({"error": {...}}) when Exit is not 0.
	Error json.RawMessage
}

// Runner runs rally's commands for the server.
type Runner interface {
	// Has says whether this build has the command (plan, check
	// before-complete): tools of missing commands are not offered.
	Has(cmd []string) bool
	// Run runs the command with --json as the server's identity. host
	// is what the host said of itself, for an identity that nothing else
	// gives.
	Run(ctx context.Context, host Host, c Call) Outcome
}

// Options configure a server.
type Options struct {
	Version string
	// Tools, when set, offers only these tools (tests).
	Tools []string
}

// Host is what the host says of itself: its name in the handshake and,
// when it names one in a call's _meta, the session the call belongs to
// (Family is the host as rally's hooks spell it, hooks.Codex).
type Host struct {
	Client  string
	Family  string
	Session string
}

// Call is one command as the Runner runs it: the command path, the flags
// the arguments set (each one "--name=value" element, so no value is ever
// read as another flag) and the positional arguments, which the Runner
// passes after "--".
type Call struct {
	Cmd   []string
	Flags []string
	Args  []string
}

// SetFlag adds --name=value when value is not empty.
func (c *Call) SetFlag(name, value string) {
	if value != "" {
		c.Flags = append(c.Flags, "--"+name+"="+value)
	}
}

// AddFlags adds --name=v for each value.
func (c *Call) AddFlags(name string, values []string) {
	for _, v := range values {
		c.Flags = append(c.Flags, "--"+name+"="+v)
	}
}

// On adds --name when b is true.
func (c *Call) On(name string, b bool) {
	if b {
		c.Flags = append(c.Flags, "--"+name)
	}
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

// ErrorObject is the §7 error object {"error": {"exit", "code", "message",
// "hints"}}.
func ErrorObject(exit int, code, msg string, hints []string) json.RawMessage {
	if hints == nil {
		hints = []string{}
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"exit": exit, "code": code, "message": msg, "hints": hints}})
	return b
}
