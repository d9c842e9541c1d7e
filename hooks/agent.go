package hooks

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/git-rally/git-rally/facts"
)

// contextBudget bounds the session-start room; hosts cap hook context near
// 10,000 characters.
const contextBudget = 6000

// heartbeatAfter: an agent that only edits files it already holds writes
// nothing, so after this much silence a hook records one presence fact.
// Its liveness (and with it every lease it holds) then never lapses while
// it works. One fact whatever the number of claims: leases renew from the
// owner's latest fact in the projection, never through renewal facts.
const heartbeatAfter = facts.ActiveWindow / 3

func (a *agentRun) sessionStart() Answer {
	if err := a.open(); err != nil {
		a.warn("room not shown: %v", err)
		return a.quiet()
	}
	subject := fmt.Sprintf("%s session", a.host.tool)
	if a.p.Source != "" {
		subject += " (" + facts.Sanitize(a.p.Source, 40) + ")"
	}
	if _, err := a.ledger.Append(facts.Simple(&facts.Fact{Kind: facts.KindPresence, Tool: a.me.Tool, Session: a.me.Session, Subject: subject})); err != nil {
		a.warn("could not record presence: %v", err)
	}
	st, err := a.ledger.Read()
	if err != nil {
		a.warn("room not shown: %v", err)
		return a.quiet()
	}
	exported := a.inv.Getenv("RALLY_TOOL") != ""
	if a.host.name == Claude && !exported {
		exported = a.exportIdentity()
	}
	size := func(c *facts.Compact) int { return len(roomText(a.me, c, exported)) }
	c := st.CompactRoom(a.me, nil, contextBudget, a.inv.Now, size)
	var ids []string
	for _, h := range c.Handoffs {
		ids = append(ids, h.Fact.ID)
	}
	a.markShown(st, ids)
	return a.answer(a.host.context(a.host.start, roomText(a.me, c, exported)))
}

// exportIdentity hands the hook's identity to the agent's own shell
// commands through Claude Code's CLAUDE_ENV_FILE, so `git rally claim`
// typed by the agent and the claims its hooks take have one owner.
func (a *agentRun) exportIdentity() bool {
	file := a.inv.Getenv("CLAUDE_ENV_FILE")
	if file == "" {
		return false
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		a.warn("could not export RALLY_TOOL: %v", err)
		return false
	}
	_, werr := fmt.Fprintf(f, "export RALLY_TOOL='%s'\n", a.me.Tool)
	return errors.Join(werr, f.Close()) == nil
}

func (a *agentRun) preToolUse() Answer {
	raw := editPaths(a.host.name, a.p)
	if len(raw) == 0 {
		return a.quiet()
	}
	if err := a.open(); err != nil {
		a.warn("edit not checked: %v", err)
		return a.quiet()
	}
	paths := a.repoPaths(raw)
	if len(paths) == 0 {
		return a.quiet()
	}
	st, err := a.ledger.Read()
	if err != nil {
		a.warn("edit not checked: the rally ledger is unreadable: %v", err)
		return a.quiet()
	}
	now := a.inv.Now
	res := st.CheckBeforeWrite(a.me, paths, now)
	type verdict struct{ own, stop, warn bool }
	per := map[string]*verdict{}
	for _, p := range paths {
		per[p] = &verdict{}
	}
	var stops, warns, shorts []string
	for _, f := range res.Findings {
		v := per[f.Path]
		switch {
		case f.Code == facts.OwnClaim:
			v.own = true
		case f.Severity == facts.SevStop:
			v.stop = true
			long, short := describe(st, f, a.me, now)
			stops, shorts = append(stops, long), append(shorts, short)
		case f.Severity == facts.SevWarn:
			v.warn = true
			long, short := describe(st, f, a.me, now)
			warns, shorts = append(warns, long), append(shorts, short)
		}
	}
	strict := a.inv.Getenv("RALLY_HOOK_STRICT") == "1"
	if strict && len(stops) > 0 {
		return a.answer(a.host.deny(findingsText(stops)))
	}
	var free []string
	for _, p := range paths {
		if v := per[p]; !v.own && !v.stop && !v.warn {
			free = append(free, "file:"+p)
		}
	}
	wrote := false
	if len(free) > 0 {
		_, err := a.ledger.Append(facts.Claim(facts.ClaimRequest{Owner: a.me, Scopes: free, Subject: "editing (" + a.host.name + " hook)"}))
		var ce *facts.ConflictError
		switch {
		case errors.As(err, &ce):
			// Claimed by someone else since the check: a stop after all.
			short := fmt.Sprintf("%s is claimed by %s", strings.TrimPrefix(ce.Wanted, "file:"), ident(ce.Owner.String()))
			stops, shorts = append(stops, fmt.Sprintf("%s (claim %s)", short, ce.ClaimID)), append(shorts, short)
			if strict {
				return a.answer(a.host.deny(findingsText(stops)))
			}
		case err != nil:
			a.warn("could not claim %s: %v", strings.Join(free, " "), err)
		default:
			wrote = true
		}
	}
	if !wrote {
		a.heartbeat(st)
	}
	if len(stops)+len(warns) == 0 {
		return a.quiet()
	}
	summary := "git rally: " + shorts[0]
	if len(shorts) > 1 {
		summary += fmt.Sprintf(" (and %d more)", len(shorts)-1)
	}
	return a.answer(a.host.advise(findingsText(append(stops, warns...)), summary))
}

// heartbeat records one presence fact when the agent has been silent for
// heartbeatAfter, keeping the subject it last gave.
func (a *agentRun) heartbeat(st *facts.State) {
	last, seen := st.LastSeen(a.me)
	if seen && a.inv.Now.Sub(last) < heartbeatAfter {
		return
	}
	subject := ""
	if p := st.Peers[a.me.String()]; p != nil {
		subject = p.Subject
	}
	if _, err := a.ledger.Append(facts.Simple(&facts.Fact{Kind: facts.KindPresence, Tool: a.me.Tool, Session: a.me.Session, Subject: subject})); err != nil {
		a.warn("could not record presence: %v", err)
	}
}

func (a *agentRun) promptSubmit() Answer {
	if err := a.open(); err != nil {
		a.warn("inbox not checked: %v", err)
		return a.quiet()
	}
	st, err := a.ledger.Read()
	if err != nil {
		a.warn("inbox not checked: %v", err)
		return a.quiet()
	}
	a.heartbeat(st)
	items := st.Inbox([]string{a.me.Tool}, a.inv.Now)
	seen := loadShown(a.repo, a.me)
	var fresh []facts.InboxItem
	for _, it := range items {
		if !seen[it.Fact.ID] {
			fresh = append(fresh, it)
		}
	}
	if len(fresh) == 0 {
		return a.quiet()
	}
	var ids []string
	for _, it := range fresh {
		ids = append(ids, it.Fact.ID)
	}
	a.markShown(st, ids)
	return a.answer(a.host.context(a.host.prompt, inboxText(a.me, fresh)))
}

// markShown adds ids to what the agent has seen, forgetting handoffs that
// no longer wait for it.
func (a *agentRun) markShown(st *facts.State, ids []string) {
	seen := loadShown(a.repo, a.me)
	for _, id := range ids {
		seen[id] = true
	}
	var keep []string
	for _, it := range st.Inbox([]string{a.me.Tool}, a.inv.Now) {
		if seen[it.Fact.ID] {
			keep = append(keep, it.Fact.ID)
		}
	}
	if err := saveShown(a.repo, a.me, keep); err != nil {
		a.warn("could not remember shown handoffs: %v", err)
	}
}
