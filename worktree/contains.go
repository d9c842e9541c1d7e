package worktree

import (
	"errors"

	"github.com/git-rally/git-rally/refs"
)

// Contains reports whether commit rev is in the history of commit base
// (git merge-base --is-ancestor): whether work made at rev is in base.
func (r *Repo) Contains(base, rev string) (bool, error) {
	_, err := r.git("merge-base", "--is-ancestor", rev, base)
	if err == nil {
		return true, nil
	}
	var ge *refs.GitError
	if errors.As(err, &ge) && ge.Code == 1 {
		return false, nil
	}
	return false, err
}
