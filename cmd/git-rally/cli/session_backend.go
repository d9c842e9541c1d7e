package cli

import (
	"errors"
	"os"
	"strings"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/session"
)

// newBackend is the terminal backend a --backend value names: tmux, or
// auto (which is tmux); anything else is a usage error.
func newBackend(name string) (session.Backend, error) {
	if demoTerminal != nil {
		return demoTerminal, nil
	}
	switch name {
	case "", "auto", "tmux":
		return &session.Tmux{}, nil
	}
	return nil, &usageError{Msg: "unknown backend " + quoteName(name) + ": rally runs sessions in tmux", Hint: "--backend tmux"}
}

// backendReady is newBackend plus a check that its program is installed
// (exit 1 with an install hint when not).
func backendReady(name string) (session.Backend, error) {
	b, err := newBackend(name)
	if err != nil {
		return nil, err
	}
	return b, backendErr(b.Available())
}

// backendErr gives a missing backend its install hint.
func backendErr(err error) error {
	var nb *session.NoBackendError
	if errors.As(err, &nb) {
		return &facts.FailedError{Err: err, Hint: nb.Hint}
	}
	return err
}

// liveTargets asks the backend once which targets live; only when the
// room has a managed session that may be running, so a room without
// any costs no process.
func liveTargets(b session.Backend, st *facts.State) (map[string]bool, error) {
	need := false
	for _, s := range session.Managed(st) {
		if s.Status != session.StatusStopped {
			need = true
			break
		}
	}
	if !need {
		return map[string]bool{}, nil
	}
	if err := b.Available(); err != nil {
		return map[string]bool{}, nil // nothing can run without it
	}
	return b.Live()
}

// resolveSession finds a managed session by id, tool or unique prefix.
func resolveSession(f *factory, name string) (*facts.State, *facts.Fact, error) {
	st, err := f.State()
	if err != nil {
		return nil, nil, err
	}
	s, err := session.Resolve(st, name)
	return st, s, err
}

func quoteName(s string) string { return "\"" + facts.Sanitize(s, 80) + "\"" }

func passEnv() []string {
	var out []string
	for _, k := range []string{"PATH"} {
		if v, ok := os.LookupEnv(k); ok && !strings.ContainsRune(v, 0) {
			out = append(out, k+"="+v)
		}
	}
	return out
}
