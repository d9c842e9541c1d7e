package hooks

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// preCommit checks the staged paths against other owners' claims for the
// committing identity. It warns on stderr and blocks (exit 1) only in
// strict mode (git config rally.strict true, or RALLY_HOOK_STRICT=1), and
// never when the ledger is missing or cannot be read.
func preCommit(inv Invocation) Answer {
	var errb strings.Builder
	warn := func(format string, a ...any) { fmt.Fprintf(&errb, "git-rally: warning: "+format+"\n", a...) }
	done := func(code int) Answer { return Answer{Stderr: []byte(errb.String()), Code: code} }

	r, err := inv.repoAt(inv.Dir)
	if err != nil {
		warn("staged paths not checked: %v", err)
		return done(0)
	}
	if exists(filepath.Join(r.GitDir, "MERGE_HEAD")) {
		// A merge brings in others' work; their claims are not in its way.
		return done(0)
	}
	dir := r.WorkTree
	if dir == "" {
		dir = r.GitDir
	}
	out, err := refs.Git(dir, nil, "diff", "--cached", "--name-only", "-z", "--no-renames")
	if err != nil {
		warn("staged paths not checked: %v", err)
		return done(0)
	}
	var paths []string
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		return done(0)
	}
	l, owned, err := inv.ledgerOf(r)
	if err != nil {
		warn("staged paths not checked: the rally ledger cannot be opened: %v", err)
		return done(0)
	}
	if owned {
		defer l.Close()
	}
	if head, err := l.Head(); err == nil && head.IsZero() {
		warn("no rally ledger in this repository; staged paths not checked (`git rally init` starts one)")
		return done(0)
	}
	st, err := l.Read()
	release(l, false, warn)
	if err != nil {
		warn("staged paths not checked: the rally ledger cannot be read: %v", err)
		return done(0)
	}
	me := facts.Owner{}
	if inv.Identity != nil {
		if me, err = inv.Identity(); err != nil {
			me = facts.Owner{}
			warn("no rally identity (RALLY_TOOL or git config rally.tool): your own claims count as another's")
		}
	}
	res := st.CheckBeforeWrite(me, paths, inv.Now)
	var holders []string
	held := map[string]bool{}
	peer := false
	freeze, freezeBy := "", ""
	for _, f := range res.Findings {
		if f.Severity != facts.SevStop && f.Severity != facts.SevWarn {
			continue
		}
		line, _ := describe(st, f, me, inv.Now)
		peer = peer || strings.Contains(line, "«")
		warn("%s", line)
		if f.Severity == facts.SevStop {
			holders = append(holders, f.Owner.Tool)
			held[f.Path] = true
			if f.Code == facts.RoomFreeze && freeze == "" {
				freeze, freezeBy = f.Claim, f.Owner.Tool
			}
		}
	}
	if peer {
		warn("%s", untrustedLine)
	}
	if res.Allow || !strict(inv, dir) {
		return done(0)
	}
	n := len(held)
	if freeze != "" {
		fmt.Fprintf(&errb, "git-rally: error: commit blocked: the lead %s froze the room (blocker %s; rally.strict)\n", ident(freezeBy), freeze)
		fmt.Fprintf(&errb, "git-rally: hint: wait until the lead lifts it (git rally resolve %s), or skip rally's check once with `git commit --no-verify`\n", freeze)
		return done(1)
	}
	fmt.Fprintf(&errb, "git-rally: error: commit blocked: %d staged path%s held by active agents (rally.strict)\n", n, plural(n))
	fmt.Fprintf(&errb, "git-rally: hint: ask them with `git rally handoff --target %s --subject \"...\"`, or skip rally's check once with `git commit --no-verify`\n", ident(holders[0]))
	return done(1)
}

// strict is RALLY_HOOK_STRICT=1 or git config rally.strict true.
func strict(inv Invocation, dir string) bool {
	if inv.Getenv("RALLY_HOOK_STRICT") == "1" {
		return true
	}
	v, err := refs.Git(dir, nil, "config", "--type=bool", "--get", "rally.strict")
	return err == nil && strings.TrimSpace(v) == "true"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
