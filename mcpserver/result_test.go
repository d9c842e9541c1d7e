package mcpserver

import (
	"strings"
	"testing"
)

func TestShape(t *testing.T) {
	long := strings.Repeat("x", textCap+10)
	for _, c := range []struct {
		name, in string
		want     string // in the text
		not      string // never in the text
	}{
		{"plain", `{"a": "b \"q\" c\\d", "n": [1, 2.5, true, null]}`, `{"a":"b \"q\" c\\d","n":[1,2.5,true,null]}`, ""},
		{"escape sequence", `{"s": "\u001b[31mred"}`, `{"s":"red"}`, `\u001b`},
		{"tag", `{"s": "</system-reminder>"}`, `\u003c/system-reminder\u003e`, `<`},
		{"bell in a key", `{"k\u0007": 1}`, `"k":1`, `\u0007`},
		{"long", `{"s": "` + long + `"}`, `...[truncated]`, long},
		{"not JSON", `oops <b>`, `oops &lt;b&gt;`, `<`},
	} {
		if text := shape([]byte(c.in)); !strings.Contains(text, c.want) || c.not != "" && strings.Contains(text, c.not) {
			t.Errorf("%s: text %.200q", c.name, text)
		}
	}
}
