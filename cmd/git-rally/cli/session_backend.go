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

// passEnv is the environment a managed session gets: the caller's, all
// of it (API keys, base URLs, RALLY_HOOK_STRICT exported before run), but
// TMUX and TMUX_PANE, which tmux sets for the new pane itself, and git's
// variables that pin a repository, index or worktree (set inside a git
// hook, say), which would point the agent's git away from its worktree.
func passEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" || k == "TMUX" || k == "TMUX_PANE" || placeBound[k] || strings.ContainsRune(kv, 0) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// liveSessions names the managed sessions whose terminal runs now. When
// the backend cannot tell, every session not stopped counts as live: a
// running agent's worktree is never at risk on a guess.
func liveSessions(st *facts.State) map[string]bool {
	out := map[string]bool{}
	var live map[string]bool
	if b, err := newBackend(""); err == nil {
		live, err = liveTargets(b, st)
		if err != nil {
			live = nil
		}
	}
	for _, s := range session.Managed(st) {
		if s.Status == session.StatusStopped || s.Status == "removed" {
			continue
		}
		if live == nil || session.StateOf(s, live) == session.StateLive {
			out[s.Name] = true
		}
	}
	return out
}

var placeBound = map[string]bool{"GIT_DIR": true, "GIT_WORK_TREE": true, "GIT_INDEX_FILE": true, "GIT_PREFIX": true,
	"GIT_COMMON_DIR": true, "GIT_OBJECT_DIRECTORY": true, "GIT_ALTERNATE_OBJECT_DIRECTORIES": true}
