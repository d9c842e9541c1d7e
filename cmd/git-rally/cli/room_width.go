package cli

import (
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The terminal room fits its terminal: $COLUMNS, else the terminal's
// width, else 100 columns; --wide (width 0) never wraps. A line longer
// than the width wraps at a space onto lines indented under it: nothing
// the web page shows is cut away. The JSON is the whole text, for
// machines.

// defaultRoomWidth is the width when neither $COLUMNS nor a terminal says.
const defaultRoomWidth = 100

// roomWidth is the width the human room fits into, 0 for no limit.
func roomWidth(w io.Writer, wide bool) int {
	if wide {
		return 0
	}
	if n, err := strconv.Atoi(strings.TrimSpace(os.Getenv("COLUMNS"))); err == nil && n > 0 {
		return max(n, 40)
	}
	if n := termWidth(w); n > 0 {
		return max(n, 40)
	}
	return defaultRoomWidth
}

// fitWriter writes each line wrapped to width visible columns (colour
// escapes take none).
type fitWriter struct {
	w     io.Writer
	width int
}

func (f *fitWriter) Write(p []byte) (int, error) {
	if f.width <= 0 {
		return f.w.Write(p)
	}
	lines := strings.SplitAfter(string(p), "\n")
	var b strings.Builder
	for _, l := range lines {
		nl := strings.HasSuffix(l, "\n")
		b.WriteString(strings.Join(wrapLine(strings.TrimSuffix(l, "\n"), f.width), "\n"))
		if nl {
			b.WriteByte('\n')
		}
	}
	if _, err := io.WriteString(f.w, b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// wrapLine breaks s into lines of at most width visible columns, at the
// last space that fits (mid-word only when a word is longer than a line).
// The lines after the first are indented four columns past s's own
// indent, while that leaves half the width for the text.
func wrapLine(s string, width int) []string {
	if visibleLen(s) <= width {
		return []string{s}
	}
	indent := len(s) - len(strings.TrimLeft(s, " "))
	cont := indent + 4
	if cont > width/2 {
		cont = width / 2
	}
	pad := strings.Repeat(" ", cont)
	var out []string
	line, room := s, width
	for visibleLen(line) > room {
		cut, next := breakAt(line, room)
		out = append(out, strings.TrimRight(line[:cut], " "))
		line = pad + strings.TrimLeft(line[next:], " ")
		room = width
	}
	return append(out, line)
}

// breakAt returns where to end a line of s that fits room visible
// columns, and where the rest starts: after the last space that fits
// past the indent, else after room columns.
func breakAt(s string, room int) (cut, next int) {
	indent := len(s) - len(strings.TrimLeft(s, " "))
	n, space, hard := 0, -1, len(s)
	for i := 0; i < len(s); {
		if s[i] == 0x1b {
			if j := strings.IndexByte(s[i:], 'm'); j >= 0 {
				i += j + 1
				continue
			}
		}
		if n == room {
			hard = i
			break
		}
		if s[i] == ' ' && i > indent {
			space = i
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		n++
	}
	if hard < len(s) && s[hard] == ' ' {
		return hard, hard + 1
	}
	if space > 0 {
		return space, space + 1
	}
	return hard, hard
}

// visibleLen counts the runes of s outside colour escapes.
func visibleLen(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] == 0x1b {
			if j := strings.IndexByte(s[i:], 'm'); j >= 0 {
				i += j + 1
				continue
			}
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		n++
	}
	return n
}
