package cli

import (
	"errors"
	"os"
	"strings"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/session"
)

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

// resolveSession finds a managed session by id, tool or unique prefix.
func resolveSession(f *factory, name string) (*facts.State, *facts.Fact, error) {
	st, err := f.State()
	if err != nil {
		return nil, nil, err
	}
	s, err := session.Resolve(st, name)
	return st, s, err
}

func passEnv() []string {
	var out []string
	for _, k := range []string{"PATH"} {
		if v, ok := os.LookupEnv(k); ok && !strings.ContainsRune(v, 0) {
			out = append(out, k+"="+v)
		}
	}
	return out
}
