package worktree

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// quietEnv keeps git from touching anything it does not have to: no
// optional index refresh by status, no prompts, stable messages.
var quietEnv = []string{"GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C"}

// Dir is where git commands for this repository run: the worktree, or the
// git dir of a bare repository.
func (r *Repo) Dir() string {
	if r.WorkTree != "" {
		return r.WorkTree
	}
	return r.GitDir
}

func (r *Repo) git(args ...string) (string, error) {
	return refs.Git(r.Dir(), quietEnv, args...)
}

// Linked is one entry of `git worktree list`.
type Linked struct {
	Path     string // as git records it, symlinks resolved when possible
	Head     string
	Branch   string // short name; "" when detached
	Bare     bool
	Locked   bool
	Prunable bool // its directory is gone
}

// Worktrees lists every worktree of the repository, the main one first.
func (r *Repo) Worktrees() ([]Linked, error) {
	out, err := r.git("worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, err
	}
	var all []Linked
	var cur *Linked
	for _, tok := range strings.Split(out, "\x00") {
		if tok == "" {
			cur = nil
			continue
		}
		key, val, _ := strings.Cut(tok, " ")
		if key == "worktree" {
			all = append(all, Linked{Path: realPath(val)})
			cur = &all[len(all)-1]
			continue
		}
		if cur == nil {
			continue
		}
		switch key {
		case "HEAD":
			if strings.Trim(val, "0") != "" { // an unborn branch shows zeros
				cur.Head = val
			}
		case "branch":
			cur.Branch = strings.TrimPrefix(val, "refs/heads/")
		case "bare":
			cur.Bare = true
		case "locked":
			cur.Locked = true
		case "prunable":
			cur.Prunable = true
		}
	}
	return all, nil
}

func realPath(p string) string {
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	return filepath.Clean(p)
}

// Dirty returns the paths of a worktree that hold uncommitted, untracked or
// unmerged work, as `git status --porcelain` shows them ("XY path"). It
// never writes the index.
func Dirty(path string) ([]string, error) {
	out, err := refs.Git(path, quietEnv, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignore-submodules=none")
	if err != nil {
		return nil, err
	}
	var dirty []string
	toks := strings.Split(out, "\x00")
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if len(t) < 4 {
			continue
		}
		dirty = append(dirty, t)
		if t[0] == 'R' || t[0] == 'C' {
			i++ // the source path of a rename or copy
		}
	}
	return dirty, nil
}

// StatusPaths strips the "XY " prefix of Dirty's entries.
func StatusPaths(entries []string) []string {
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		if len(e) > 3 {
			out = append(out, e[3:])
		}
	}
	return out
}

// Commit resolves a revision to a commit id; an unknown revision is a
// usage error.
func (r *Repo) Commit(rev string) (string, error) {
	if rev == "" || strings.HasPrefix(rev, "-") {
		return "", &facts.UsageError{Msg: fmt.Sprintf("bad revision %q", rev), Hint: "git branch --list"}
	}
	out, err := r.git("rev-parse", "--verify", "--quiet", rev+"^{commit}")
	if err != nil {
		var ge *refs.GitError
		if errors.As(err, &ge) && ge.Code == 1 {
			return "", &facts.UsageError{Msg: fmt.Sprintf("unknown revision %q", rev), Hint: "git branch --list"}
		}
		return "", err
	}
	return strings.TrimSpace(out), nil
}

// branchHead returns the commit of refs/heads/<branch>, "" when there is
// no such branch.
func (r *Repo) branchHead(branch string) (string, error) {
	out, err := r.git("rev-parse", "--verify", "--quiet", "refs/heads/"+branch+"^{commit}")
	if err != nil {
		var ge *refs.GitError
		if errors.As(err, &ge) && ge.Code == 1 {
			return "", nil
		}
		return "", err
	}
	return strings.TrimSpace(out), nil
}

// DefaultBase names the branch work merges into: the main checkout's
// branch, else main, else master.
func (r *Repo) DefaultBase() (string, error) {
	unborn := ""
	if b, err := os.ReadFile(filepath.Join(r.CommonDir, "HEAD")); err == nil {
		s := strings.TrimSpace(string(b))
		if name, ok := strings.CutPrefix(s, "ref: refs/heads/"); ok {
			unborn = name
			if h, err := r.branchHead(name); err != nil {
				return "", err
			} else if h != "" {
				return name, nil
			}
		}
	}
	for _, name := range []string{"main", "master"} {
		h, err := r.branchHead(name)
		if err != nil {
			return "", err
		}
		if h != "" {
			return name, nil
		}
	}
	if unborn != "" {
		if h, _ := r.branchHead(unborn); h == "" {
			return "", &facts.UsageError{Msg: fmt.Sprintf("no commits yet: branch %s has no commit to start from", unborn),
				Hint: `git commit --allow-empty -m "first commit"`}
		}
	}
	return "", &facts.UsageError{Msg: "cannot tell which branch work merges into: the main checkout is not on a branch and there is no main or master",
		Hint: "pass --base <branch>"}
}

// aheadBehind counts the commits of head not in base (ahead) and of base
// not in head (behind).
func (r *Repo) aheadBehind(base, head string) (ahead, behind int, err error) {
	out, err := r.git("rev-list", "--left-right", "--count", base+"..."+head)
	if err != nil {
		return 0, 0, err
	}
	f := strings.Fields(out)
	if len(f) != 2 {
		return 0, 0, fmt.Errorf("git rev-list --count: unexpected output %q", out)
	}
	behind, _ = strconv.Atoi(f[0])
	ahead, _ = strconv.Atoi(f[1])
	return ahead, behind, nil
}

// emptyTree is the id git gives the empty tree; it needs no object.
const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// changedFiles lists the files head changes since its merge base with base
// (every file when they share no history).
func (r *Repo) changedFiles(base, head string) ([]string, error) {
	out, err := r.git("diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", base+"..."+head, "--")
	if err != nil {
		var ge *refs.GitError
		if !errors.As(err, &ge) || !strings.Contains(ge.Stderr, "merge base") {
			return nil, err
		}
		if out, err = r.git("diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", emptyTree, head, "--"); err != nil {
			return nil, err
		}
	}
	return splitZ(out), nil
}

func splitZ(s string) []string {
	var out []string
	for _, t := range strings.Split(s, "\x00") {
		if t != "" {
			out = append(out, t)
		}
	}
	return out
}
