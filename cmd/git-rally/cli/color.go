package cli

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

// colorValue is --color=auto|always|never.
type colorValue struct{ mode string }

func (v *colorValue) String() string {
	if v.mode == "" {
		return "auto"
	}
	return v.mode
}
func (v *colorValue) Type() string { return "when" }
func (v *colorValue) Set(s string) error {
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

// outTerminal reports whether stdout w is a terminal (or RALLY_FORCE_TTY
// says to take it for one).
func outTerminal(w io.Writer) bool {
	return os.Getenv("RALLY_FORCE_TTY") == "1" || isTerminal(w)
}

// colorOn decides once whether human output on stdout is coloured.
func (f *factory) colorOn() bool {
	if f.colorDecided {
		return f.colorUse
	}
	f.colorDecided = true
	switch f.color.mode {
	case "always":
		f.colorUse = true
	case "never":
		f.colorUse = false
	default:
		f.colorUse = os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb" && outTerminal(f.Out)
	}
	return f.colorUse
}

// ANSI colours of the human output.
const (
	cRed    = "31"
	cGreen  = "32"
	cYellow = "33"
	cBold   = "1"
	cDim    = "2"
)

// painter colours s, or returns it as it is.
type painter func(code, s string) string

func plainPaint(_, s string) string { return s }

func (f *factory) paint() painter {
	if !f.colorOn() {
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
		return cRed
	case "warn", "idle", "acknowledged":
		return cYellow
	case "active", "live", "info", "open", "verified":
		return cGreen
	case "left":
		return cDim
	}
	return ""
}

// paintState colours a state word by what it means, keeping its padding.
func paintState(p painter, s string) string {
	c := stateColor(s)
	if c == "" {
		return s
	}
	word := strings.TrimRight(s, " ")
	return p(c, word) + s[len(word):]
}
