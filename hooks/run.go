package hooks

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/ledger"
	"github.com/git-rally/git-rally/refs"
	"github.com/git-rally/git-rally/worktree"
)

// Invocation is one run of `git rally hook <host> <event>`.
type Invocation struct {
	Host, Event string
	Input       []byte // the host's JSON from stdin
	Dir         string // the process's working directory
	Getenv      func(string) string
	Now         time.Time
	// Identity is the command line's identity (--tool, RALLY_TOOL,
	// rally.tool, the worktree's session): the committer's, for the git
	// pre-commit hook. Agent hooks derive theirs from the host's session.
	Identity func() (facts.Owner, error)
	// Args are the hook's own arguments after <host> <event> (git gives
	// pre-push the remote's name).
	Args []string
	// Repo and Ledger, when set, are the command's: the repository found
	// from a directory, and a repository's ledger, each opened once per
	// process (the CLI's factory caches them, and Identity uses the
	// same). Nil discovers and opens here, and so does a nil ledger from
	// Ledger. A ledger from Ledger is not closed by the hook; its
	// warnings are taken into the answer.
	Repo   func(dir string) (*worktree.Repo, error)
	Ledger func(r *worktree.Repo) (*ledger.Ledger, error)
}

// repoAt is the repository holding dir.
func (inv Invocation) repoAt(dir string) (*worktree.Repo, error) {
	if inv.Repo != nil {
		return inv.Repo(dir)
	}
	return worktree.Discover(dir)
}

// ledgerOf opens r's ledger; owned says the hook opened it and closes it.
func (inv Invocation) ledgerOf(r *worktree.Repo) (l *ledger.Ledger, owned bool, err error) {
	if inv.Ledger != nil {
		if l, err = inv.Ledger(r); l != nil || err != nil {
			return l, false, err
		}
	}
	l, err = ledger.OpenConfig(r.CommonDir, func() time.Time { return inv.Now }, refs.ReadConfigWith(r.CommonDir, r.GitDir, r.Config()))
	if err != nil {
		return nil, false, err
	}
	l.AutoPack = os.Getenv("RALLY_AUTOPACK") != "0"
	return l, true, nil
}

// release takes l's warnings into warn, and closes l when owned (the
// hook opened it).
func release(l *ledger.Ledger, owned bool, warn func(string, ...any)) {
	for _, w := range l.Warnings {
		warn("%s", w)
	}
	l.Warnings = nil
	if owned {
		l.Close()
	}
}

// Answer is what a hook prints and how it exits.
type Answer struct {
	Stdout []byte
	Stderr []byte
	Code   int
}

// Handle answers one hook invocation. It never fails: malformed input, an
// unknown host or event, a missing ledger or an internal error all answer
// "allow, nothing to say", with a line on stderr at most.
func Handle(inv Invocation) (ans Answer) {
	if inv.Getenv == nil {
		inv.Getenv = os.Getenv
	}
	host, isAgent := agentHosts[inv.Host]
	defer func() {
		if p := recover(); p != nil {
			ans = Answer{Stdout: host.quiet(), Stderr: []byte(fmt.Sprintf("git-rally: warning: hook failed open: %v\n", p))}
		}
	}()
	if inv.Getenv("RALLY_HOOKS") == "off" {
		return Answer{Stdout: host.quiet()}
	}
	ev := normEvent(inv.Event)
	switch {
	case inv.Host == Git && ev == "precommit":
		return preCommit(inv)
	case inv.Host == Git && ev == "prepush":
		return prePush(inv)
	case inv.Host == Git && ev == "postcommit":
		return postCommit(inv)
	case inv.Host == Git:
		return Answer{Stderr: []byte(fmt.Sprintf("git-rally: warning: unknown git hook %q; nothing checked\n", inv.Event))}
	case !isAgent:
		return Answer{Stderr: []byte(fmt.Sprintf("git-rally: warning: unknown hook host %q; nothing checked\n", inv.Host))}
	}
	p, ok := parsePayload(inv.Input)
	if !ok {
		return Answer{Stdout: host.quiet()}
	}
	a := &agentRun{inv: inv, host: host, p: p}
	switch ev {
	case normEvent(host.start), "sessionstart":
		a.noteHost = true
		return a.sessionStart()
	case normEvent(host.preTool), "pretooluse":
		return a.preToolUse()
	case normEvent(host.shell):
		if host.shell == "" {
			break
		}
		if a.p.ToolName == "" {
			a.p.ToolName = "Shell"
		}
		return a.preToolUse()
	case normEvent(host.prompt), "userpromptsubmit":
		if host.name == Cursor {
			return a.quiet() // beforeSubmitPrompt cannot add context
		}
		a.noteHost = true
		return a.promptSubmit()
	case normEvent(host.end), "sessionend":
		return a.sessionEnd()
	case normEvent(host.postTool):
		if host.postTool == "" {
			break
		}
		a.setActivity(facts.ActivityWorking)
		return a.quiet()
	case normEvent(host.permission):
		if host.permission == "" {
			break
		}
		// Nothing is answered: the person decides, rally only notes
		// that the agent waits for them.
		a.setActivity(facts.ActivityNeedsInput)
		return a.quiet()
	case normEvent(host.notification):
		if host.notification == "" {
			break
		}
		return a.notification()
	case normEvent(host.stop):
		if host.stop == "" {
			break
		}
		return a.turnEnd()
	case normEvent(host.afterTool), "aftertool":
		if host.afterTool == "" {
			break
		}
		return a.afterTool()
	}
	return Answer{Stdout: host.quiet(), Stderr: []byte(fmt.Sprintf("git-rally: warning: unknown %s hook event %q; nothing checked\n", inv.Host, inv.Event))}
}

// normEvent makes "pre-tool-use", "PreToolUse" and "pre_tool_use" one name.
func normEvent(e string) string {
	return strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(e))
}

// agentRun is one agent-host hook run.
type agentRun struct {
	inv    Invocation
	host   agentHost
	p      payload
	repo   *worktree.Repo
	ledger *ledger.Ledger
	// ownLedger: the hook opened ledger (and closes it).
	ownLedger bool
	me        facts.Owner
	dirs      map[string]bool // repository paths of the call that are directories
	stderr    strings.Builder
	// noteHost: this event notes the identity under the host process, for
	// the MCP server the host starts. The events that begin a session or
	// a turn do; the ones before and after every tool call need not read
	// /proc again.
	noteHost bool
}

func (a *agentRun) warn(format string, args ...any) {
	fmt.Fprintf(&a.stderr, "git-rally: warning: "+format+"\n", args...)
}

func (a *agentRun) answer(out []byte) Answer {
	if a.ledger != nil {
		release(a.ledger, a.ownLedger, a.warn)
		a.ledger = nil
	}
	return Answer{Stdout: out, Stderr: []byte(a.stderr.String())}
}

func (a *agentRun) quiet() Answer { return a.answer(a.host.quiet()) }

// SessionTag is the short session part of an agent host's identity: the
// first 8 characters of its session id. Codex ids are time-ordered UUIDs
// whose first characters are shared by sessions started within a minute,
// so for Codex it is the last 8 (the random part).
func SessionTag(host, id string) string {
	var b strings.Builder
	for _, r := range id {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			b.WriteRune(r)
		}
	}
	s := b.String()
	if host == Codex {
		s = strings.ReplaceAll(s, "-", "")
		if len(s) > 8 {
			s = s[len(s)-8:]
		}
		return s
	}
	if len(s) > 8 {
		s = s[:8]
	}
	return strings.Trim(s, "-")
}

// HostTool is the identity rally's hooks use for the agent whose shell
// this process runs in, when the host says which session that is: Codex
// gives its commands CODEX_THREAD_ID, the session id its hooks receive.
// "" when no host says.
func HostTool(getenv func(string) string) string {
	if id := getenv("CODEX_THREAD_ID"); id != "" {
		if tag := SessionTag(Codex, id); tag != "" {
			return agentHosts[Codex].tool + ":" + tag
		}
	}
	return ""
}

// open finds the repository the host works in (the payload's cwd, else the
// process's), the identity and the ledger.
func (a *agentRun) open() error {
	if a.ledger != nil {
		return nil
	}
	if err := a.locate(); err != nil {
		return err
	}
	l, owned, err := a.inv.ledgerOf(a.repo)
	if err != nil {
		return err
	}
	a.ledger, a.ownLedger = l, owned
	return nil
}

// locate finds the repository and the identity, without the ledger.
func (a *agentRun) locate() error {
	if a.repo != nil {
		return nil
	}
	dir := a.inv.Dir
	if a.p.Cwd != "" {
		if fi, err := os.Stat(a.p.Cwd); err == nil && fi.IsDir() {
			dir = a.p.Cwd
		}
	}
	r, err := a.inv.repoAt(dir)
	if err != nil {
		return err
	}
	me := facts.Owner{Tool: a.inv.Getenv("RALLY_TOOL"), Session: a.inv.Getenv("RALLY_SESSION")}
	if me.Tool == "" {
		tag := SessionTag(a.host.name, a.p.SessionID)
		if tag == "" {
			return fmt.Errorf("no RALLY_TOOL and no session id from %s", a.host.name)
		}
		me.Tool = a.host.tool + ":" + tag
		if a.noteHost {
			rememberHost(r, me.Tool) // for the MCP server the same host starts
		}
	}
	if me.Session == "" {
		me.Session = worktree.SessionName(r)
	}
	if err := facts.CheckTool(me.Tool); err != nil {
		return err
	}
	a.repo, a.me = r, me
	return nil
}

// repoPaths makes the host's paths repository-relative. A path in another
// worktree of the same repository is taken relative to that worktree; a
// path outside the room (another repository, nowhere) is not rally's
// business and is dropped.
func (a *agentRun) repoPaths(raw []string) []string {
	base := a.p.Cwd
	if base == "" {
		base = a.inv.Dir
	}
	roots := map[string]string{} // directory -> worktree top in this room, "" if none
	var out []string
	for _, p := range raw {
		p = filepath.FromSlash(p)
		if !filepath.IsAbs(p) {
			p = filepath.Join(base, p)
		}
		p = filepath.Clean(p)
		dir := nearestDir(filepath.Dir(p))
		root, ok := roots[dir]
		if !ok {
			if top, ok := a.inOwnWorktree(dir); ok {
				root = top
			} else if r, err := worktree.Discover(dir); err == nil && r.CommonDir == a.repo.CommonDir {
				root = r.WorkTree
			}
			roots[dir] = root
		}
		if root == "" {
			continue
		}
		rel, err := facts.RepoPath(p, facts.PathContext{Root: root, Cwd: root}, false)
		if err != nil || rel == "." {
			continue
		}
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			if a.dirs == nil {
				a.dirs = map[string]bool{}
			}
			a.dirs[rel] = true // checked, never claimed as a file
		}
		out = append(out, rel)
	}
	return uniquePaths(out)
}

// inOwnWorktree says whether dir lies in the worktree the hook runs in,
// with no repository between (no .git, nothing that looks like a git
// directory): what Discover would find, without reading the repository
// again. Anything else is left to Discover.
func (a *agentRun) inOwnWorktree(dir string) (string, bool) {
	top := a.repo.WorkTree
	if top == "" || !within(top, dir) {
		return "", false
	}
	for d := dir; d != top; d = filepath.Dir(d) {
		if exists(filepath.Join(d, ".git")) || exists(filepath.Join(d, "HEAD")) || filepath.Dir(d) == d {
			return "", false
		}
	}
	return top, true
}

// nearestDir is dir or its closest existing ancestor: a new file may sit in
// directories that do not exist yet.
func nearestDir(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			return d
		}
		if filepath.Dir(d) == d {
			return d
		}
	}
}
