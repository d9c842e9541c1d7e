package cli

import (
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The terminal room fits its terminal: $COLUMNS, else the terminal's
// width, else 100 columns; --wide (width 0) never cuts. A line longer
// than the width is cut with an ellipsis, never with "...[truncated]";
// the JSON is the whole text, for machines.

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

// fitWriter writes each line cut to width visible columns (colour
// escapes take none), ending a cut line with "…".
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
		b.WriteString(fitLine(strings.TrimSuffix(l, "\n"), f.width))
		if nl {
			b.WriteByte('\n')
		}
	}
	if _, err := io.WriteString(f.w, b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// fitLine cuts s to width visible runes, the last one an ellipsis.
func fitLine(s string, width int) string {
	if visibleLen(s) <= width {
		return s
	}
	var b strings.Builder
	n, esc := 0, false
	for i := 0; i < len(s); {
		if s[i] == 0x1b {
			j := strings.IndexByte(s[i:], 'm')
			if j < 0 {
				break
			}
			b.WriteString(s[i : i+j+1])
			i += j + 1
			esc = true
			continue
		}
		if n == width-1 {
			break
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		b.WriteRune(r)
		i += size
		n++
	}
	b.WriteString("…")
	if esc {
		b.WriteString("\x1b[0m")
	}
	return b.String()
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
