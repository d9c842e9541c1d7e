package worktree

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/git-rally/git-rally/facts"
)

// BranchPrefix is where the branches of rally worktrees live.
const BranchPrefix = "rally/"

// MaxName bounds a worktree name.
const MaxName = 64

// SanitizeName maps a name onto [A-Za-z0-9._-]: every other character
// becomes '-', and what git would refuse in a branch name is trimmed.
func SanitizeName(name string) string {
	var b strings.Builder
	for _, r := range name {
		if nameChar(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	s := b.String()
	for strings.Contains(s, "..") {
		s = strings.ReplaceAll(s, "..", ".")
	}
	s = strings.TrimLeft(s, ".-")
	s = strings.TrimSuffix(s, ".lock")
	s = strings.TrimRight(s, ".")
	if len(s) > MaxName {
		s = strings.TrimRight(s[:MaxName], ".")
	}
	return s
}

func nameChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
}

// CheckName accepts a worktree name that is its own sanitized form, so the
// directory, the branch rally/<name> and the session are all <name>.
func CheckName(name string) error {
	if name != "" && SanitizeName(name) == name {
		return nil
	}
	e := &facts.UsageError{Msg: fmt.Sprintf("bad worktree name %q: use letters, digits, '.', '_' and '-' (not leading '.' or '-', no '..', at most %d)", name, MaxName)}
	if s := SanitizeName(name); s != "" {
		e.Hint = "git rally worktree add " + s
	}
	return e
}

// Path is where the worktree <name> lives: <main checkout>/.rally/worktrees/<name>.
func (r *Repo) Path(name string) (string, error) {
	main := r.MainWorkTree()
	if main == "" {
		return "", &facts.UsageError{Msg: "a bare repository has no main checkout to hold .rally/worktrees",
			Hint: "run git rally worktree add in a repository with a working tree"}
	}
	return filepath.Join(main, ".rally", "worktrees", name), nil
}

// nameOf is the rally name of a path under .rally/worktrees, or "".
func (r *Repo) nameOf(path string) string {
	return SessionName(&Repo{CommonDir: r.CommonDir, WorkTree: path})
}
