package hooks

import (
	"strings"
	"time"

	"github.com/git-rally/git-rally/delivery"
	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/ledger"
)

// setActivity records what the agent is doing (SPEC §13) when it changed.
// The hooks before and after every tool call say "working" again and
// again: this machine's note of the last activity recorded for the owner
// (one small file) answers those without opening the ledger; only a change
// appends, and the append checks against the ledger under its lock.
func (a *agentRun) setActivity(activity string) {
	if err := a.locate(); err != nil {
		return // no identity, no repository: nothing to record, fail open
	}
	if ledger.NotedActivity(a.repo.CommonDir, a.me) == activity {
		return
	}
	if err := a.open(); err != nil {
		a.warn("activity not recorded: %v", err)
		return
	}
	if _, err := a.ledger.SetActivity(a.me, activity, ""); err != nil {
		a.warn("activity not recorded: %v", err)
	}
}

// notification is a host telling the person something: a permission
// prompt or a question waits for them (needs-input), or the agent has
// been waiting at its prompt for a while (idle).
func (a *agentRun) notification() Answer {
	switch strings.ToLower(a.p.NotificationType) {
	case "idle_prompt":
		a.setActivity(facts.ActivityIdle)
	case "permission_prompt", "elicitation_dialog", "elicitation_url_dialog", "toolpermission":
		a.setActivity(facts.ActivityNeedsInput)
	}
	return a.quiet()
}

// turnEnd is the end of the agent's turn (Claude Code's and Codex's Stop,
// Gemini CLI's AfterAgent): it waits at its prompt now. Messages queued
// for a managed session go over here, through the host's own channel (a
// block decision whose reason the agent goes on with), never typed into
// its terminal; their delivery facts are written as they go.
func (a *agentRun) turnEnd() Answer {
	if text := a.handover(); text != "" {
		a.setActivity(facts.ActivityWorking)
		return a.answer(a.host.block(text))
	}
	a.setActivity(facts.ActivityIdle)
	return a.quiet()
}

// handover takes what is queued for the managed session this hook acts
// for, records its delivery and returns its text ("" when nothing waits).
// Text that could not be recorded is put back in the queue.
func (a *agentRun) handover() string {
	session := a.inv.Getenv("RALLY_SESSION")
	if session == "" || a.inv.Getenv("RALLY_MANAGED") != "1" || a.locate() != nil {
		return ""
	}
	common := a.repo.CommonDir
	if !delivery.Waiting(common, session) {
		return ""
	}
	if err := a.open(); err != nil {
		a.warn("queued messages not handed over: %v", err)
		return ""
	}
	st, err := a.ledger.Read()
	if err != nil {
		a.warn("queued messages not handed over: %v", err)
		return ""
	}
	es := delivery.Take(common, session)
	open := func(id string) *facts.Fact {
		h := st.Handoffs()[id]
		if h == nil || !facts.AddressedTo(h.Fact, a.me.Tool) || h.State() == "resolved" {
			return nil
		}
		return h.Fact
	}
	text, fs := delivery.Handover(es, a.me.Tool, session, open)
	if text == "" {
		return ""
	}
	if _, err := a.ledger.Append(func(*facts.State, time.Time) ([]*facts.Fact, error) { return fs, nil }); err != nil {
		delivery.Requeue(common, session, es, a.inv.Now)
		a.warn("queued messages not handed over: %v", err)
		return ""
	}
	var ids []string
	for _, f := range fs {
		if f.Ref != "" {
			ids = append(ids, f.Ref)
		}
	}
	if len(ids) > 0 {
		a.markShown(st, ids) // the inbox need not show them again
	}
	return text
}
