package session

import (
	"errors"
	"fmt"
)

// Backend is a terminal multiplexer rally can start sessions in and reach
// later. Targets are the backend's own names: for tmux the session name
// (rally-<id>) of a session rally started, a pane id such as "%3" for an
// adopted pane.
type Backend interface {
	// Name is the backend's name as recorded in session facts.
	Name() string
	// Available reports whether the backend can be used on this machine
	// (ErrNoBackend when its program is missing).
	Available() error
	// Start runs argv (no shell) detached in a new terminal session
	// named name, in dir, with env (KEY=VALUE) added.
	Start(name, dir string, env, argv []string) error
	// Live lists every live target with one call to the backend.
	Live() (map[string]bool, error)
	// Resolve checks that a target exists and returns its stable form
	// (tmux: the pane id) and the terminal session it belongs to.
	Resolve(target string) (stable, sessionName string, err error)
	// Capture returns the last lines of the target's terminal.
	Capture(target string, lines int) ([]string, error)
	// Paste puts text into the target's terminal as a paste (never as
	// key names) and then presses Enter.
	Paste(target, text string) error
	// Kill ends the target's terminal session.
	Kill(target string) error
	// Attach connects the caller's terminal to the target until the
	// user detaches.
	Attach(target string) error
}

// ErrNoBackend reports that the backend's program is not installed.
var ErrNoBackend = errors.New("terminal backend not installed")

// NoBackendError says which program is missing and how to install it.
type NoBackendError struct{ Program, Hint string }

func (e *NoBackendError) Error() string {
	return fmt.Sprintf("%s is not installed: managed sessions run in %s", e.Program, e.Program)
}
func (e *NoBackendError) Unwrap() error { return ErrNoBackend }

// TerminalName is the backend session a managed session runs in.
func TerminalName(session string) string { return "rally-" + session }

// Ending is how a session's program ended, as its terminal kept it.
type Ending struct {
	Status   int    // exit status (128+signal when a signal ended it)
	Signal   int    // the signal that ended it, 0 for none
	LastLine string // the last non-empty line of its terminal, raw
}

// Ender is a Backend that keeps a terminal whose program exited, so its
// output and exit status can still be read (tmux: remain-on-exit).
type Ender interface {
	// Ended says how the target's program ended; ok is false when the
	// target is gone or its program still runs.
	Ended(target string) (e Ending, ok bool, err error)
	// Exists says whether the backend still holds the target, its
	// program running or not.
	Exists(target string) bool
}
