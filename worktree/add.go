package worktree

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// Added is an agent worktree just created.
type Added struct {
	Name       string
	Path       string
	Branch     string // rally/<name>
	BaseRev    string // what the caller asked for, or the default base
	BaseCommit string
}

// queueName serialises rally's own worktree changes, so two adds of one
// name cannot undo each other's work when one of them rolls back.
const queueName = "worktree"

// Add creates <main checkout>/.rally/worktrees/<name> on a new branch
// rally/<name> from base ("" = DefaultBase, else the main checkout's
// commit), then calls record (which appends the session fact). It fails
// closed: an existing path or branch is refused before anything is made,
// and when git or record fails everything Add created is removed again.
func (r *Repo) Add(name, base string, record func(*Added) error) (*Added, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	path, err := r.Path(name)
	if err != nil {
		return nil, err
	}
	a := &Added{Name: name, Path: path, Branch: BranchPrefix + name, BaseRev: base}
	if a.BaseRev == "" {
		if a.BaseRev, err = r.DefaultBase(); err != nil {
			// No branch to start from: the main checkout's commit.
			out, herr := refs.Git(r.MainWorkTree(), quietEnv, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
			if herr != nil {
				return nil, err
			}
			a.BaseRev, a.BaseCommit = "HEAD", trim(out)
		}
	}
	if a.BaseCommit == "" {
		if a.BaseCommit, err = r.Commit(a.BaseRev); err != nil {
			return nil, err
		}
	}

	q, err := refs.QueueLock(r.CommonDir, queueName)
	if err != nil {
		return nil, err
	}
	defer refs.UnlockQueue(q)

	if _, err := os.Lstat(path); err == nil {
		return nil, &facts.RefusedError{Msg: fmt.Sprintf("refusing to clobber %s: the path exists", path),
			Hint: fmt.Sprintf("pick another name, or remove it first: git rally worktree remove %s", name)}
	}
	if h, err := r.branchHead(a.Branch); err != nil {
		return nil, err
	} else if h != "" {
		return nil, &facts.RefusedError{Msg: fmt.Sprintf("branch %s exists (at %s)", a.Branch, short(h)),
			Hint: fmt.Sprintf("pick another name, or merge and delete it first: git branch -d %s", a.Branch)}
	}

	made := r.missingDirs(path)
	if _, err := r.git("worktree", "add", "-b", a.Branch, path, a.BaseCommit); err != nil {
		r.rollbackAdd(a, made)
		return nil, &facts.FailedError{Err: err, Hint: "nothing was created; check the message above, or `git worktree prune` if the path was registered before"}
	}
	if record != nil {
		if err := record(a); err != nil {
			r.rollbackAdd(a, made)
			return nil, fmt.Errorf("recording the session (the worktree was removed again): %w", err)
		}
	}
	return a, nil
}

// missingDirs lists path and its parents up to the main checkout that do
// not exist yet, deepest first: what a rollback may remove.
func (r *Repo) missingDirs(path string) []string {
	var out []string
	stop := r.MainWorkTree()
	for d := path; d != stop && d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		out = append(out, d)
	}
	return out
}

// rollbackAdd undoes a failed Add: the worktree registration, the branch
// when it holds no work (it points at the base commit, so nobody's commit
// is lost even if someone else made it), and the directories Add made.
func (r *Repo) rollbackAdd(a *Added, made []string) {
	if wts, err := r.Worktrees(); err == nil {
		for _, w := range wts {
			if w.Path == realPath(a.Path) || w.Path == a.Path {
				r.git("worktree", "remove", "--force", "--force", a.Path)
			}
		}
	}
	if h, _ := r.branchHead(a.Branch); h != "" && h == a.BaseCommit {
		r.git("branch", "-D", a.Branch)
	}
	for _, d := range made {
		if d == a.Path {
			os.RemoveAll(d)
			continue
		}
		os.Remove(d) // only when empty
	}
}

func trim(s string) string {
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == '\r' || s[len(s)-1] == ' ') {
		s = s[:len(s)-1]
	}
	return s
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
