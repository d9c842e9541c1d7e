package cmdutil

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// Colour and the pager follow git and the NO_COLOR convention: colour only
// when stdout is a terminal (--color=auto, the default), never with
// NO_COLOR set, and --color=always|never overrides both. RALLY_FORCE_TTY=1
// makes stdout count as a terminal (for tests and for tools that capture
// a terminal), as GH_FORCE_TTY does for gh.

// ColorValue is --color=auto|always|never.
type ColorValue struct{ mode string }

// String, Type and Set make ColorValue a pflag value.
func (v *ColorValue) String() string {
	if v.mode == "" {
		return "auto"
	}
	return v.mode
}
func (v *ColorValue) Type() string { return "when" }
func (v *ColorValue) Set(s string) error {
	switch s {
	case "auto", "always", "never":
		v.mode = s
		return nil
	case "true", "yes":
		v.mode = "always"
		return nil
	case "false", "no":
		v.mode = "never"
		return nil
	}
	return fmt.Errorf("--color must be auto, always or never, not %q", s)
}

// OutTerminal reports whether stdout w is a terminal (or RALLY_FORCE_TTY
// says to take it for one).
func OutTerminal(w io.Writer) bool {
	return os.Getenv("RALLY_FORCE_TTY") == "1" || IsTerminal(w)
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// ColorOn decides once whether human output on stdout is coloured.
func (f *Factory) ColorOn() bool {
	if f.colorDecided {
		return f.colorUse
	}
	f.colorDecided = true
	switch f.Color.mode {
	case "always":
		f.colorUse = true
	case "never":
		f.colorUse = false
	default:
		f.colorUse = os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb" && OutTerminal(f.Out)
	}
	return f.colorUse
}

// ANSI colours of the human output.
const (
	CRed    = "31"
	CGreen  = "32"
	CYellow = "33"
	CBold   = "1"
	CDim    = "2"
)

// Painter colours s, or returns it as it is.
type Painter func(code, s string) string

func plainPaint(_, s string) string { return s }

// Paint is the Painter of the human output on stdout.
func (f *Factory) Paint() Painter {
	if !f.ColorOn() {
		return plainPaint
	}
	return func(code, s string) string {
		if s == "" {
			return s
		}
		return "\x1b[" + code + "m" + s + "\x1b[0m"
	}
}

// stateColor is the colour of a severity or a state word.
func stateColor(s string) string {
	switch strings.TrimSpace(s) {
	case "stop", "stale", "expired", "CONTESTED", "OVERDUE", "bad":
		return CRed
	case "warn", "idle", "acknowledged":
		return CYellow
	case "active", "live", "info", "open", "verified":
		return CGreen
	case "left":
		return CDim
	}
	return ""
}

// PaintState colours a state word by what it means, keeping its padding.
func PaintState(p Painter, s string) string {
	c := stateColor(s)
	if c == "" {
		return s
	}
	word := strings.TrimRight(s, " ")
	return p(c, word) + s[len(word):]
}
