package hooks

import (
	"encoding/json"
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
	if a.host.name == Cursor && !exported {
		// Cursor's sessionStart may set the environment of the agent's
		// own commands.
		return a.answer(encode(cursorAnswer{AdditionalContext: shown(roomText(a.me, c, true)), Env: map[string]string{"RALLY_TOOL": a.me.Tool}}))
	}
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
	a.setActivity(facts.ActivityWorking)
	ans, denied := a.checkEdit()
	if in := a.identityInput(); in != nil && !denied {
		var env envelope
		if json.Unmarshal(ans.Stdout, &env) == nil {
			env.Specific = &specific{HookEventName: a.host.preTool, ToolInput: in}
			ans.Stdout = encode(env)
		}
	}
	return ans
}

// identityInput gives a Gemini CLI shell command that runs git rally the
// hook's identity: Gemini starts the agent's commands with no trace of its
// session, so the command itself is prefixed with an export of RALLY_TOOL
// (Gemini tells the model that the hook changed it). Only commands that
// name rally are touched, and none when RALLY_TOOL is set already.
func (a *agentRun) identityInput() json.RawMessage {
	if a.host.name != Gemini || a.p.ToolName != "run_shell_command" || a.inv.Getenv("RALLY_TOOL") != "" {
		return nil
	}
	command, _ := a.p.ToolInput.Command.(string)
	if !strings.Contains(command, "rally") {
		return nil
	}
	tag := SessionTag(a.host.name, a.p.SessionID)
	if tag == "" || strings.Contains(command, "RALLY_TOOL=") {
		return nil
	}
	tool := a.host.tool + ":" + tag
	out, err := json.Marshal(map[string]string{"command": "export RALLY_TOOL='" + tool + "'; " + command})
	if err != nil {
		return nil
	}
	return out
}

// editCheck is the write check of the paths one tool call writes.
type editCheck struct {
	st                   *facts.State
	paths                []string
	per                  map[string]*verdict
	stops, warns, shorts []string // described findings; shorts for the user
}

type verdict struct{ own, stop, warn bool }

// review runs the write check of the tool call; nil when it writes nothing
// rally can check (or the room cannot be read: fail open).
func (a *agentRun) review() *editCheck {
	raw := editPaths(a.host.name, a.p)
	if len(raw) == 0 {
		return nil
	}
	if err := a.open(); err != nil {
		a.warn("edit not checked: %v", err)
		return nil
	}
	paths := a.repoPaths(raw)
	if len(paths) == 0 {
		return nil
	}
	st, err := a.ledger.Read()
	if err != nil {
		a.warn("edit not checked: the rally ledger is unreadable: %v", err)
		return nil
	}
	now := a.inv.Now
	c := &editCheck{st: st, paths: paths, per: map[string]*verdict{}}
	// A directory the call removes, moves or copies over as a whole is
	// checked as a dir scope, so claims of files inside it count.
	scopes := make([]facts.Scope, len(paths))
	for i, p := range paths {
		scopes[i] = facts.Scope{Kind: "file", Value: p}
		if a.dirs[p] {
			scopes[i].Kind = "dir"
		}
		c.per[findingKey(scopes[i])] = &verdict{}
	}
	for _, f := range st.CheckScopes(a.me, scopes, now).Findings {
		v := c.per[f.Path]
		if v == nil {
			v = &verdict{}
		}
		switch {
		case f.Code == facts.OwnClaim:
			v.own = true
		case f.Severity == facts.SevStop:
			v.stop = true
			long, short := describe(st, f, a.me, now)
			c.stops, c.shorts = append(c.stops, long), append(c.shorts, short)
		case f.Severity == facts.SevWarn:
			// Anyone's unscoped blocker is advice for every path; it
			// does not keep the path from being claimed.
			v.warn = v.warn || f.Code != facts.UnscopedBlocker
			long, short := describe(st, f, a.me, now)
			c.warns, c.shorts = append(c.warns, long), append(c.shorts, short)
		}
	}
	return c
}

// findingKey is the Path a write-check finding carries for a scope.
func findingKey(s facts.Scope) string {
	if s.Kind == "file" {
		return s.Value
	}
	return s.String()
}

// checkEdit is the write check of a tool call: deny in strict mode, advice
// otherwise, claims for the free paths. denied says it answered a denial.
func (a *agentRun) checkEdit() (ans Answer, denied bool) {
	c := a.review()
	if c == nil {
		return a.quiet(), false
	}
	strict := a.inv.Getenv("RALLY_HOOK_STRICT") == "1"
	if strict && len(c.stops) > 0 {
		return a.answer(a.host.deny(findingsText(c.stops))), true
	}
	var free []string
	for _, p := range c.paths {
		if v := c.per[p]; !a.dirs[p] && !v.own && !v.stop && !v.warn {
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
			c.stops, c.shorts = append(c.stops, fmt.Sprintf("%s (claim %s)", short, ce.ClaimID)), append(c.shorts, short)
			if strict {
				return a.answer(a.host.deny(findingsText(c.stops))), true
			}
		case err != nil:
			a.warn("could not claim %s: %v", strings.Join(free, " "), err)
		default:
			wrote = true
		}
	}
	if !wrote {
		a.heartbeat(c.st)
	}
	if len(c.stops)+len(c.warns) == 0 {
		return a.quiet(), false
	}
	summary := "git rally: " + c.shorts[0]
	if len(c.shorts) > 1 {
		summary += fmt.Sprintf(" (and %d more)", len(c.shorts)-1)
	}
	return a.answer(a.host.advise(findingsText(append(c.stops, c.warns...)), summary)), false
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
	a.setActivity(facts.ActivityWorking)
	if err := a.open(); err != nil {
		a.warn("inbox not checked: %v", err)
		return a.quiet()
	}
	// What waits for a managed session goes with this prompt, as its
	// context.
	handed := a.handover()
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
	risks := overlapsFor(st, a.me.Tool, seen)
	var ids []string
	for _, it := range fresh {
		ids = append(ids, it.Fact.ID)
	}
	for _, r := range risks {
		ids = append(ids, r.ID)
	}
	// The lead's freeze and the rejection of a handoff of mine, once each.
	var notes []string
	for _, b := range st.Freezes() {
		if b.Tool != a.me.Tool && !seen[b.ID] {
			ids = append(ids, b.ID)
			notes = append(notes, fmt.Sprintf("git rally: the lead %s froze the room (blocker %s): %s; no writes until the lead lifts it (git rally resolve %s)",
				ident(b.Tool), b.ID, peerText(b.Subject), b.ID))
		}
	}
	for _, h := range st.RejectedHandoffs(a.me.Tool) {
		if r := h.Rejection; !seen[r.ID] {
			ids = append(ids, r.ID)
			notes = append(notes, fmt.Sprintf("git rally: %s rejected your handoff %s (%s): %s; hand it on with `git rally handoff --ref %s --target <tool> --subject ...` or withdraw it with `git rally retract %s --reason ...`",
				ident(r.Tool), h.Fact.ID, peerText(h.Fact.Subject), peerText(r.Reason), h.Fact.ID, h.Fact.ID))
		}
	}
	if len(ids) == 0 {
		if handed != "" {
			return a.answer(a.host.context(a.host.prompt, handed))
		}
		return a.quiet()
	}
	a.markShown(st, ids)
	text := ""
	if len(fresh) > 0 {
		text = inboxText(a.me, fresh)
	}
	if len(risks) > 0 {
		text += overlapText(a.me, risks)
	}
	if len(notes) > 0 {
		text += strings.Join(notes, "\n") + "\n"
		if len(fresh) == 0 {
			text += untrustedLine + "\n"
		}
	}
	if handed != "" {
		text = handed + "\n\n" + text
	}
	return a.answer(a.host.context(a.host.prompt, text))
}

// overlapsFor are the open overlap-detected risks that name tool as an
// owner and that it has not been shown, oldest first.
func overlapsFor(st *facts.State, tool string, seen map[string]bool) []*facts.Fact {
	var out []*facts.Fact
	for _, r := range st.Risks {
		if seen[r.ID] || st.Retraction[r.ID] != "" {
			continue
		}
		for _, o := range facts.OverlapOwners(r) {
			if o == tool {
				out = append(out, r)
				break
			}
		}
	}
	facts.SortFacts(out)
	return out
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
	for id, r := range st.Risks {
		if seen[id] && facts.OverlapOwners(r) != nil {
			keep = append(keep, id)
		}
	}
	for _, b := range st.Freezes() {
		if seen[b.ID] {
			keep = append(keep, b.ID)
		}
	}
	for _, h := range st.RejectedHandoffs(a.me.Tool) {
		if seen[h.Rejection.ID] {
			keep = append(keep, h.Rejection.ID)
		}
	}
	if err := saveShown(a.repo, a.me, keep); err != nil {
		a.warn("could not remember shown handoffs: %v", err)
	}
}

// afterTool runs after an edit went through (Gemini CLI's AfterTool,
// Cursor's afterFileEdit). For Gemini it gives the model the warnings its
// BeforeTool could only show the user: the same check, nothing claimed.
// Cursor's afterFileEdit cannot answer; an edit Cursor made without
// preToolUse is claimed there when free.
func (a *agentRun) afterTool() Answer {
	if a.host.name == Cursor {
		if a.p.FilePath != "" && a.p.ToolName == "" {
			a.p.ToolName = "Write"
			a.p.ToolInput = toolInput{FilePath: a.p.FilePath}
		}
		a.checkEdit()
		return a.answer(a.host.quiet())
	}
	a.setActivity(facts.ActivityWorking)
	c := a.review()
	if c == nil || len(c.stops)+len(c.warns) == 0 {
		return a.quiet()
	}
	return a.answer(a.host.afterAdvice(findingsText(append(c.stops, c.warns...))))
}

// sessionEnd leaves the room for the host session that ended: its claims
// are released, so the person's next session (a new identity, from a new
// session id) is not blocked by them. Inside a managed session the hooks
// act as the session's tool, which outlives one host session: there rally
// stop, not the host, ends it.
func (a *agentRun) sessionEnd() Answer {
	if a.inv.Getenv("RALLY_MANAGED") == "1" && a.inv.Getenv("RALLY_TOOL") != "" {
		a.setActivity(facts.ActivityExited)
		return a.quiet()
	}
	if err := a.open(); err != nil {
		a.warn("did not leave the room: %v", err)
		return a.quiet()
	}
	st, err := a.ledger.Read()
	if err != nil {
		a.warn("did not leave the room: %v", err)
		return a.quiet()
	}
	n := len(st.OwnedClaims(a.me))
	if p := st.Peers[a.me.String()]; n == 0 && (p == nil || p.Left) {
		return a.quiet()
	}
	subject := fmt.Sprintf("%s session ended; closes %d claim(s)", a.host.tool, n)
	if a.p.Reason != "" {
		subject = fmt.Sprintf("%s session ended (%s); closes %d claim(s)", a.host.tool, facts.Sanitize(a.p.Reason, 40), n)
	}
	if _, err := a.ledger.Append(facts.Simple(&facts.Fact{Kind: facts.KindLeave, Tool: a.me.Tool, Session: a.me.Session, Subject: subject})); err != nil {
		a.warn("did not leave the room: %v", err)
	}
	return a.quiet()
}
