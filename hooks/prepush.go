package hooks

import (
	"fmt"
	"strings"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/ledger"
	"github.com/git-rally/git-rally/refs"
)

// prePushScript is the pre-push hook rally installs with the pre-commit
// one. Like it, its bytes change only when they must, and it runs
// git-rally directly. git gives a pre-push hook the remote's name and URL
// as arguments and one line per ref on stdin: <local ref> <local id>
// <remote ref> <remote id>.
const prePushScript = `#!/bin/sh
# git-rally pre-push hook: says to run git rally sync when the ledger part of a push would be rejected.
# Installed by "git rally hooks install --git"; "git rally hooks uninstall --git"
# removes it and puts back the hook that was here (pre-push.before-rally).
input=$(cat)
chained="$(dirname "$0")/pre-push.before-rally"
if [ -x "$chained" ]; then
	printf '%s\n' "$input" | "$chained" "$@" || exit $?
fi
command -v git-rally >/dev/null 2>&1 || exit 0
printf '%s\n' "$input" | exec git-rally hook git pre-push "$1"
`

// prePushMarker identifies a rally pre-push hook of any version.
const prePushMarker = "# git-rally pre-push hook"

const zeroID = "0000000000000000000000000000000000000000"

// prePush reads the refs a push is about to update. When it carries
// refs/rally/ledger to a remote whose ledger has facts this clone has not
// merged (the remote's tip is not an ancestor of ours), git will reject
// that part ("[rejected] refs/rally/ledger (fetch first)"): it says to run
// git rally sync, which merges and pushes, never force. It never blocks
// the push: the branch part goes through either way.
func prePush(inv Invocation) Answer {
	remote := "origin"
	if len(inv.Args) > 0 && inv.Args[0] != "" {
		remote = inv.Args[0]
	}
	r, err := inv.repoAt(inv.Dir)
	if err != nil {
		return Answer{}
	}
	dir := r.WorkTree
	if dir == "" {
		dir = r.GitDir
	}
	for _, line := range strings.Split(string(inv.Input), "\n") {
		f := strings.Fields(line)
		if len(f) != 4 || f[2] != ledger.LedgerRef || f[1] == zeroID || strings.Trim(f[3], "0") == "" {
			continue
		}
		if _, err := refs.Git(dir, nil, "merge-base", "--is-ancestor", f[3], f[1]); err == nil {
			continue // a fast-forward: git takes it
		}
		name := facts.Sanitize(remote, 100)
		return Answer{Stderr: []byte(fmt.Sprintf(
			"git-rally: %s has ledger facts this clone has not merged: the refs/rally/ledger part of this push will be rejected\n"+
				"git-rally: hint: git rally sync %s   # merges both ledgers and pushes; never --force\n", name, name))}
	}
	return Answer{}
}
