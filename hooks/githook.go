package hooks

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-rally/git-rally/refs"
	"github.com/git-rally/git-rally/worktree"
)

// preCommitScript is the pre-commit hook rally installs. Its bytes must
// never change between versions: install, status and uninstall recognise
// it by content, and people compare hooks by content too. A hook that was
// there before is kept next to it and runs first; its exit status counts.
const preCommitScript = `#!/bin/sh
# git-rally pre-commit hook: checks the staged paths against other agents' claims.
# Installed by "git rally hooks install --git"; "git rally hooks uninstall --git"
# removes it and puts back the hook that was here (pre-commit.before-rally).
chained="$(dirname "$0")/pre-commit.before-rally"
if [ -x "$chained" ]; then
	"$chained" "$@" || exit $?
fi
command -v git-rally >/dev/null 2>&1 || exit 0
exec git rally hook git pre-commit
`

// preCommitMarker identifies a rally pre-commit hook of any version.
const preCommitMarker = "# git-rally pre-commit hook"

// ChainedSuffix names the user's own hook once rally's takes its place.
const ChainedSuffix = ".before-rally"

// HooksDir is the directory git runs hooks from: core.hooksPath when set
// (relative to the worktree, as git takes it), else <common dir>/hooks.
func HooksDir(r *worktree.Repo) (string, error) {
	dir := r.WorkTree
	if dir == "" {
		dir = r.GitDir
	}
	out, err := refs.Git(dir, nil, "rev-parse", "--git-path", "hooks")
	if err != nil {
		return "", fmt.Errorf("finding the hooks directory: %w", err)
	}
	p := strings.TrimSpace(out)
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return filepath.Clean(p), nil
}

type gitHook struct {
	path, chain string
	exists      bool
	content     []byte
}

func readGitHook(r *worktree.Repo) (gitHook, error) {
	dir, err := HooksDir(r)
	if err != nil {
		return gitHook{}, err
	}
	h := gitHook{path: filepath.Join(dir, "pre-commit")}
	h.chain = h.path + ChainedSuffix
	if _, err := os.Lstat(h.path); err == nil {
		h.exists = true
		h.content, _ = os.ReadFile(h.path)
	}
	return h, nil
}

func (h gitHook) current() bool { return h.exists && bytes.Equal(h.content, []byte(preCommitScript)) }
func (h gitHook) ours() bool    { return h.exists && bytes.Contains(h.content, []byte(preCommitMarker)) }

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func (h gitHook) result(r *worktree.Repo) Result {
	res := Result{Host: Git, Path: display(r, h.path), State: StateNotInstalled}
	switch {
	case h.current():
		res.State = StateInstalled
	case h.ours():
		res.State = StateOutdated
		res.Note = "an older rally pre-commit hook; `git rally hooks install --git` replaces it"
	case h.exists:
		res.Note = "pre-commit is another hook; `git rally hooks install --git` keeps it and runs it first"
	}
	if res.State != StateNotInstalled && exists(h.chain) {
		res.Chained = display(r, h.chain)
	}
	return res
}

func installGit(r *worktree.Repo) (Result, error) {
	h, err := readGitHook(r)
	if err != nil {
		return Result{}, err
	}
	if h.current() {
		return h.result(r), nil
	}
	if h.exists && !h.ours() {
		if exists(h.chain) {
			return Result{}, fmt.Errorf("cannot chain %s: %s already exists; move one of them away and install again",
				display(r, h.path), display(r, h.chain))
		}
		if err := os.Rename(h.path, h.chain); err != nil {
			return Result{}, fmt.Errorf("keeping the existing pre-commit hook: %w", err)
		}
	}
	made, err := mkdirs(filepath.Dir(h.path))
	if err != nil {
		return Result{}, err
	}
	if err := writeAtomic(h.path, []byte(preCommitScript), 0o755); err != nil {
		if !h.ours() && h.exists {
			os.Rename(h.chain, h.path)
		}
		return Result{}, fmt.Errorf("writing the pre-commit hook: %w", err)
	}
	if len(made) > 0 {
		saveRecord(r, &record{Path: h.path, MadeDirs: made, Wrote: digest([]byte(preCommitScript))})
	}
	h.exists, h.content = true, []byte(preCommitScript)
	res := h.result(r)
	res.Changed = true
	return res, nil
}

func uninstallGit(r *worktree.Repo) (Result, error) {
	h, err := readGitHook(r)
	if err != nil {
		return Result{}, err
	}
	res := Result{Host: Git, Path: display(r, h.path), State: StateNotInstalled}
	switch {
	case h.ours():
		if err := os.Remove(h.path); err != nil {
			return Result{}, err
		}
		res.Changed = true
	case h.exists:
		res.Note = "pre-commit is not rally's; left as it is"
		return res, nil
	}
	// The user's hook goes back where it was, also when rally's hook was
	// deleted by hand.
	if exists(h.chain) {
		if err := os.Rename(h.chain, h.path); err != nil {
			return res, fmt.Errorf("restoring the earlier pre-commit hook: %w", err)
		}
		res.Changed = true
		res.Note = "restored the earlier pre-commit hook"
	}
	if rec := loadRecord(r, h.path); rec != nil {
		removeDirs(rec.MadeDirs)
		dropRecord(r, h.path)
	}
	return res, nil
}

func statusGit(r *worktree.Repo) (Result, error) {
	h, err := readGitHook(r)
	if err != nil {
		return Result{}, err
	}
	return h.result(r), nil
}
