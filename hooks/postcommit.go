package hooks

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/worktree"
)

// postCommitScript is the post-commit hook rally installs with the
// pre-commit one and in every worktree it makes. git ignores a
// post-commit hook's exit status; so does it.
const postCommitScript = `#!/bin/sh
# git-rally post-commit hook: predicts the new commit's merge with the other agents' branches.
# Installed by "git rally hooks install --git"; "git rally hooks uninstall --git"
# removes it and puts back the hook that was here (post-commit.before-rally).
chained="$(dirname "$0")/post-commit.before-rally"
if [ -x "$chained" ]; then
	"$chained" "$@"
fi
command -v git-rally >/dev/null 2>&1 || exit 0
exec git-rally hook git post-commit
`

// postCommitMarker identifies a rally post-commit hook of any version.
const postCommitMarker = "# git-rally post-commit hook"

var postCommitHook = gitHookFile{"post-commit", postCommitScript, postCommitMarker}

// InstallPostCommit installs only the post-commit hook for the worktree r
// (where git runs its hooks from: the common dir's hooks, or
// core.hooksPath): what rally does in every worktree it makes, so a
// conflict between agents is caught when the commit that makes it lands.
func InstallPostCommit(r *worktree.Repo) (Result, error) { return installGitHook(r, postCommitHook) }

// postCommit runs after a commit on a rally/* branch: it predicts, read-only
// (git merge-tree into a throw-away object directory), the merge of the new
// commit with every other live rally/* branch, and records one
// overlap-detected risk per pair of branches and set of files that no open
// risk records yet. One git process whatever the number of branches (one
// merge-tree; the branches are read from git's ref files); a commit on any
// other branch starts none.
// It never fails the commit.
func postCommit(inv Invocation) Answer {
	var errb strings.Builder
	warn := func(format string, a ...any) { fmt.Fprintf(&errb, "git-rally: warning: "+format+"\n", a...) }
	done := func() Answer { return Answer{Stderr: []byte(errb.String())} }

	r, err := inv.repoAt(inv.Dir)
	if err != nil {
		return done()
	}
	branch := headBranch(r.GitDir)
	if !strings.HasPrefix(branch, worktree.BranchPrefix) {
		return done()
	}
	l, owned, err := inv.ledgerOf(r)
	if err != nil {
		return done()
	}
	// As before the ledger was shared with the command: its warnings
	// are not this hook's to print.
	defer release(l, owned, func(string, ...any) {})
	if head, err := l.Head(); err != nil || head.IsZero() {
		return done()
	}
	st, err := l.Read()
	if err != nil {
		warn("merge with the other agents' branches not predicted: %v", err)
		return done()
	}
	owner, stopped := facts.BranchOwners(st)
	all, err := r.RallyBranches()
	if err != nil {
		warn("merge with the other agents' branches not predicted: %v", err)
		return done()
	}
	head := ""
	for _, b := range all {
		if b.Branch == branch {
			head = b.Head
		}
	}
	if head == "" {
		return done()
	}
	pairs, err := r.ConflictsWith(branch, head, all, func(b string) bool { return !stopped[b] })
	if err != nil {
		warn("merge with the other agents' branches not predicted: %v", err)
		return done()
	}
	if len(pairs) == 0 {
		return done()
	}
	ovs := make([]facts.BranchOverlap, len(pairs))
	for i, p := range pairs {
		ovs[i] = facts.BranchOverlap{A: p.A, B: p.B, OwnerA: owner[p.A], OwnerB: owner[p.B], Files: p.Files, Revision: head}
	}
	written, err := l.Append(facts.OverlapRisks(ovs))
	if err != nil {
		warn("predicted conflicts not recorded: %v", err)
	}
	recorded := map[string]bool{}
	for _, f := range written {
		a, b, _ := facts.OverlapBranches(f)
		recorded[a+"\x00"+b], recorded[b+"\x00"+a] = true, true
	}
	// The committer hears of a conflict when it is new; the owners' next
	// prompts and the room keep it after that.
	for _, p := range pairs {
		if !recorded[p.A+"\x00"+p.B] {
			continue
		}
		who := ""
		if o := owner[p.B]; o != "" {
			who = " (" + ident(o) + ")"
		}
		warn("%s is predicted to conflict with %s%s on %s", ident(p.A), ident(p.B), who, ident(strings.Join(p.Files, " ")))
	}
	for _, f := range written {
		fmt.Fprintf(&errb, "git-rally: recorded risk %s (see it: git rally show %s)\n", f.ID, f.ID)
	}
	return done()
}

// headBranch is the branch a worktree's HEAD names, read from its file
// (no git process): "" when detached or unreadable.
func headBranch(gitDir string) string {
	b, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return ""
	}
	name, _ := strings.CutPrefix(strings.TrimSpace(string(b)), "ref: refs/heads/")
	if name == strings.TrimSpace(string(b)) {
		return ""
	}
	return name
}

// InstallInWorktree installs the post-commit hook where git runs hooks for
// the worktree at path, and returns the hook's path when it lies inside
// that worktree (a relative core.hooksPath) and was kept out of git there.
func InstallInWorktree(path string) (string, error) {
	wr, err := worktree.Discover(path)
	if err != nil {
		return "", err
	}
	res, err := InstallPostCommit(wr)
	if err != nil {
		return "", fmt.Errorf("installing the post-commit hook: %w", err)
	}
	p := res.Path
	if filepath.IsAbs(p) {
		return "", nil // outside the worktree: the common dir's hooks
	}
	p = filepath.Join(path, p)
	if err := worktree.KeepLocal(path, []string{p}); err != nil {
		return "", fmt.Errorf("keeping %s out of git: %w", p, err)
	}
	return p, nil
}
