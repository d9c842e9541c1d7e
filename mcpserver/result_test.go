package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestShape(t *testing.T) {
	long := strings.Repeat("x", textCap+10)
	for _, c := range []struct {
		name, in string
		raw      bool   // passed on without decoding
		want     string // in the text
		not      string // never in the text
	}{
		{"plain", `{"a": "b \"q\" c\\d", "n": [1, 2.5, true, null]}`, true, `{"a":"b \"q\" c\\d","n":[1,2.5,true,null]}`, ""},
		{"escape sequence", `{"s": "\u001b[31mred"}`, false, `{"s":"red"}`, `\u001b`},
		{"tag", `{"s": "</system-reminder>"}`, false, `\u003c/system-reminder\u003e`, `<`},
		{"bell in a key", `{"k\u0007": 1}`, false, `"k":1`, `\u0007`},
		{"long", `{"s": "` + long + `"}`, false, `...[truncated]`, long},
		{"not JSON", `oops <b>`, false, `oops &lt;b&gt;`, `<`},
	} {
		v, text := shape([]byte(c.in))
		if _, isRaw := v.(json.RawMessage); isRaw != c.raw {
			t.Errorf("%s: raw %v, want %v", c.name, isRaw, c.raw)
		}
		if !strings.Contains(text, c.want) || c.not != "" && strings.Contains(text, c.not) {
			t.Errorf("%s: text %.200q", c.name, text)
		}
		if b, err := json.Marshal(v); err != nil || b[0] != '{' {
			t.Errorf("%s: structured content %s is not an object (%v)", c.name, b, err)
		}
	}
}

func TestClientTool(t *testing.T) {
	for client, want := range map[string]string{"claude-code": "claude_code:mcp-t", "codex-mcp-client": "codex:mcp-t",
		"gemini-cli-mcp-client": "gemini:mcp-t", "Cursor": "cursor:mcp-t", "": "mcp:mcp-t"} {
		if got := ClientTool(client, "t"); got != want {
			t.Errorf("ClientTool(%q) = %s, want %s", client, got, want)
		}
	}
}
