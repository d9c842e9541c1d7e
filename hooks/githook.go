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

// preCommitScript is the pre-commit hook rally installs. Its bytes change
// between versions only when they must: status calls any other rally
// pre-commit hook (found by its marker line) outdated and install replaces
// it, and people compare hooks by content too. It runs git-rally itself,
// not `git rally` (a git process less per commit). A hook that was there
// before is kept next to it and runs first; its exit status counts.
const preCommitScript = `#!/bin/sh
# git-rally pre-commit hook: checks the staged paths against other agents' claims.
# Installed by "git rally hooks install --git"; "git rally hooks uninstall --git"
# removes it and puts back the hook that was here (pre-commit.before-rally).
chained="$(dirname "$0")/pre-commit.before-rally"
if [ -x "$chained" ]; then
	"$chained" "$@" || exit $?
fi
command -v git-rally >/dev/null 2>&1 || exit 0
exec git-rally hook git pre-commit
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
	gitHookFile
	path, chain string
	exists      bool
	content     []byte
}

// gitHookFile is one git hook rally installs: its name, its fixed script,
// the marker line that recognises any version of it.
type gitHookFile struct{ name, script, marker string }

var (
	preCommitHook = gitHookFile{"pre-commit", preCommitScript, preCommitMarker}
	prePushHook   = gitHookFile{"pre-push", prePushScript, prePushMarker}
)

func readGitHook(r *worktree.Repo) (gitHook, error) { return readGitHookFile(r, preCommitHook) }

func readGitHookFile(r *worktree.Repo, hf gitHookFile) (gitHook, error) {
	dir, err := HooksDir(r)
	if err != nil {
		return gitHook{}, err
	}
	h := gitHook{gitHookFile: hf, path: filepath.Join(dir, hf.name)}
	h.chain = h.path + ChainedSuffix
	if _, err := os.Lstat(h.path); err == nil {
		h.exists = true
		h.content, _ = os.ReadFile(h.path)
	}
	return h, nil
}

func (h gitHook) current() bool { return h.exists && bytes.Equal(h.content, []byte(h.script)) }
func (h gitHook) ours() bool    { return h.exists && bytes.Contains(h.content, []byte(h.marker)) }

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
		res.Note = "an older rally " + h.name + " hook; `git rally hooks install --git` replaces it"
	case h.exists:
		res.Note = h.name + " is another hook; `git rally hooks install --git` keeps it and runs it first"
	}
	if res.State != StateNotInstalled && exists(h.chain) {
		res.Chained = display(r, h.chain)
	}
	return res
}

// installGit installs the pre-commit, pre-push and post-commit hooks; the
// result is the pre-commit one's, with what happened to the others folded
// in.
func installGit(r *worktree.Repo) (Result, error) {
	res, err := installGitHook(r, preCommitHook)
	if err != nil {
		return Result{}, err
	}
	for _, hf := range []gitHookFile{prePushHook, postCommitHook} {
		other, err := installGitHook(r, hf)
		if err != nil {
			return Result{}, err
		}
		res = foldHook(res, other, hf.name)
	}
	return res, nil
}

// foldHook adds another git hook's state to the pre-commit result: the
// git host is installed when all of them are.
func foldHook(res, other Result, name string) Result {
	res.Changed = res.Changed || other.Changed
	if res.State == StateInstalled && other.State != StateInstalled {
		res.State = StateOutdated
		if other.Note == "" {
			other.Note = "the " + name + " hook is missing; `git rally hooks install --git` adds it"
		}
	}
	notes := []string{}
	for _, n := range []string{res.Note, other.Note} {
		if n != "" {
			notes = append(notes, n)
		}
	}
	if other.Chained != "" {
		notes = append(notes, name+" runs "+other.Chained+" first")
	}
	res.Note = strings.Join(notes, "; ")
	return res
}

func installGitHook(r *worktree.Repo, hf gitHookFile) (Result, error) {
	h, err := readGitHookFile(r, hf)
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
			return Result{}, fmt.Errorf("keeping the existing %s hook: %w", h.name, err)
		}
	}
	made, err := mkdirs(filepath.Dir(h.path))
	if err != nil {
		return Result{}, err
	}
	if err := writeAtomic(h.path, []byte(h.script), 0o755); err != nil {
		if !h.ours() && h.exists {
			os.Rename(h.chain, h.path)
		}
		return Result{}, fmt.Errorf("writing the %s hook: %w", h.name, err)
	}
	if len(made) > 0 {
		saveRecord(r, &record{Path: h.path, MadeDirs: made, Wrote: digest([]byte(h.script))})
	}
	h.exists, h.content = true, []byte(h.script)
	res := h.result(r)
	res.Changed = true
	return res, nil
}

// uninstallGit removes the pre-push hook, then the pre-commit hook (whose
// result it reports; the hooks directory a record says rally made goes
// last).
func uninstallGit(r *worktree.Repo) (Result, error) {
	var others []Result
	for _, hf := range []gitHookFile{postCommitHook, prePushHook} {
		o, err := uninstallGitHook(r, hf)
		if err != nil {
			return Result{}, err
		}
		others = append(others, o)
	}
	res, err := uninstallGitHook(r, preCommitHook)
	if err != nil {
		return res, err
	}
	for _, o := range others {
		res.Changed = res.Changed || o.Changed
		if o.Note != "" && o.Note != res.Note {
			res.Note = strings.TrimPrefix(res.Note+"; "+o.Note, "; ")
		}
	}
	return res, nil
}

func uninstallGitHook(r *worktree.Repo, hf gitHookFile) (Result, error) {
	h, err := readGitHookFile(r, hf)
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
		res.Note = h.name + " is not rally's; left as it is"
		return res, nil
	}
	// The user's hook goes back where it was, also when rally's hook was
	// deleted by hand.
	if exists(h.chain) {
		if err := os.Rename(h.chain, h.path); err != nil {
			return res, fmt.Errorf("restoring the earlier %s hook: %w", h.name, err)
		}
		res.Changed = true
		res.Note = "restored the earlier " + h.name + " hook"
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
	res := h.result(r)
	if res.State == StateNotInstalled {
		return res, nil
	}
	for _, hf := range []gitHookFile{prePushHook, postCommitHook} {
		p, err := readGitHookFile(r, hf)
		if err != nil {
			return Result{}, err
		}
		res = foldHook(res, p.result(r), hf.name)
	}
	return res, nil
}
