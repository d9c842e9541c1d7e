package cli

import (
	"strings"
	"testing"
)

// A long line wraps at spaces onto indented lines, each within the width,
// and nothing of it is lost.
func TestWrapLine(t *testing.T) {
	for _, c := range []struct {
		s     string
		width int
	}{
		{"  f_0123456789abcdef claude_code:impl-1 file:src/very/long/path/to/some/module/implementation_file_name.go file:src/another/long/path/file.go exclusive", 60},
		{"      lease live until 2026-12-02 06:41 UTC, owner active; for rewrite the whole authentication flow so that tokens refresh without a restart", 50},
		{"  " + strings.Repeat("x", 130), 40},
		{"\x1b[1mpeers\x1b[0m (1) and a long tail of words that goes on and on past the edge", 30},
		{"short", 40},
	} {
		got := wrapLine(c.s, c.width)
		var words []string
		for i, l := range got {
			if n := visibleLen(l); n > c.width {
				t.Errorf("%q: line %d is %d columns, over %d", c.s, i, n, c.width)
			}
			if i > 0 && !strings.HasPrefix(l, "  ") {
				t.Errorf("%q: line %d is not indented: %q", c.s, i, l)
			}
			words = append(words, strings.Fields(l)...)
		}
		if strings.Join(words, "") != strings.Join(strings.Fields(c.s), "") {
			t.Errorf("%q wrapped loses text:\n%s", c.s, strings.Join(got, "\n"))
		}
	}
}
