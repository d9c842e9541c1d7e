package facts

import (
	"fmt"
	"strings"
	"time"
)

// Finding codes of the completion check.
const (
	OwnedActiveClaim   = "owned-active-claim"
	OwnedActiveBlocker = "owned-active-blocker"
	OpenHandoff        = "open-handoff"
)

// CheckBeforeComplete says whether me may call its work done: each claim
// it still holds stops it; each blocker it raised that is unresolved, and
// each handoff it received and has not resolved, warns.
func (s *State) CheckBeforeComplete(me Owner, now time.Time) CheckResult {
	res := CheckResult{Allow: true}
	flag := " --tool " + shellQuote(me.Tool)
	for _, c := range s.OwnedClaims(me) {
		scopes := strings.Join(c.Scopes, " ")
		msg := fmt.Sprintf("you still hold %s (claim %s); release it when done: `git rally release %s%s`", scopes, c.ID, c.ID, flag)
		if task := heldTask(c); task != "" {
			// A plan task is finished by its report, which releases
			// the claim; a release alone would leave the task undone.
			msg = fmt.Sprintf("you hold task %s (claim %s); report it with evidence, which releases it: `git rally plan report %s --evidence \"...\"%s`",
				task, c.ID, shellQuote(task), flag)
		}
		res.add(Finding{Code: OwnedActiveClaim, Severity: SevStop, Path: scopes, Claim: c.ID, Owner: me, Message: msg})
	}
	for _, b := range sortedFacts(s.Blockers) {
		if b.Owner() != me {
			continue
		}
		res.add(Finding{Code: OwnedActiveBlocker, Severity: SevWarn, Path: strings.Join(b.Scopes, " "), Claim: b.ID, Owner: me,
			Message: fmt.Sprintf("your blocker %s is unresolved: %s; lift it with `git rally resolve %s%s`", b.ID, b.Subject, b.ID, flag)})
	}
	for _, it := range s.Inbox([]string{me.Tool}, now) {
		h := it.Fact
		res.add(Finding{Code: OpenHandoff, Severity: SevWarn, Claim: h.ID, Owner: h.Owner(),
			Message: fmt.Sprintf("handoff %s from %s is %s, not resolved: %s; `git rally resolve %s%s`", h.ID, h.Tool, it.State, h.Subject, h.ID, flag)})
	}
	return res
}
