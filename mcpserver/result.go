package mcpserver

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/git-rally/git-rally/facts"
)

// textCap bounds one string of an answer: a body may be 64 KiB in the
// ledger; an agent's context gets the start of it.
const textCap = 4096

// result turns what a command did into the tool's answer: its JSON as text,
// every string sanitized and < > & escaped, its notes, and the
// untrusted-text line; a failure is a tool error whose content is the §7
// error object.
func result(o Outcome) *mcp.CallToolResult {
	body := o.Stdout
	if o.Exit != 0 {
		body = o.Error
	}
	text := shape(body)
	// No structuredContent: Claude Code hands the model structuredContent
	// (decoded and encoded again, < and > raw) in place of the content, so
	// the escaped text and the untrusted line would never reach it.
	res := &mcp.CallToolResult{IsError: o.Exit != 0}
	res.Content = append(res.Content, &mcp.TextContent{Text: text})
	if notes := noteLines(o.Stderr); notes != "" {
		res.Content = append(res.Content, &mcp.TextContent{Text: notes})
	}
	res.Content = append(res.Content, &mcp.TextContent{Text: UntrustedNote})
	return res
}

// usageResult is a tool error for arguments no command would accept.
func usageResult(msg string) *mcp.CallToolResult {
	return result(Outcome{Exit: 2, Error: ErrorObject(2, "usage", msg, nil)})
}

// shape sanitizes every string of a command's JSON and returns it as
// text with < > & escaped. JSON that does not decode is passed on as
// sanitized text.
func shape(b []byte) string {
	if plain(b) {
		// Nothing to clean: pass the command's JSON on without decoding it.
		var out bytes.Buffer
		if json.Compact(&out, b) == nil {
			return out.String()
		}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return escapeTags(facts.Sanitize(string(b), textCap))
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(true) // < > & as \u003c \u003e \u0026: no tag reaches the model as a tag
	enc.Encode(clean(v))
	return strings.TrimSpace(out.String())
}

// plain says whether JSON text holds only strings that sanitizing leaves
// as they are: printable ASCII, no escapes but \" and \\, none of < > &,
// none longer than textCap. Peer text with anything else takes the long way.
func plain(b []byte) bool {
	in, n := false, 0
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c >= 0x7f || c == '<' || c == '>' || c == '&' {
			return false
		}
		if !in {
			in = c == '"'
			n = 0
			continue
		}
		switch {
		case c < ' ':
			return false
		case c == '\\':
			if i+1 >= len(b) || (b[i+1] != '"' && b[i+1] != '\\') {
				return false
			}
			i++
		case c == '"':
			in = false
		}
		if n++; n > textCap {
			return false
		}
	}
	return true
}

func clean(v any) any {
	switch x := v.(type) {
	case string:
		return facts.Sanitize(x, textCap)
	case []any:
		for i := range x {
			x[i] = clean(x[i])
		}
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[facts.Sanitize(k, 200)] = clean(e)
		}
		return m
	}
	return v
}

func escapeTags(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// noteLines keeps the command's notes and warnings, sanitized.
func noteLines(b []byte) string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, escapeTags(facts.Sanitize(l, textCap)))
		}
	}
	return strings.Join(out, "\n")
}
