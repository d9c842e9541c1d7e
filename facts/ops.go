package facts

import (
	"fmt"
	"strings"
	"time"
)

// NoChange is a state change that is in effect already: the append writes
// nothing and the command succeeds, with Msg as a note.
type NoChange struct{ Msg string }

func (e *NoChange) Error() string { return e.Msg }

func noChange(format string, a ...any) error { return &NoChange{Msg: fmt.Sprintf(format, a...)} }

// Simple returns an AppendFunc that writes one fact as given.
func Simple(f *Fact) AppendFunc {
	return func(st *State, now time.Time) ([]*Fact, error) { return []*Fact{f}, nil }
}

// ClaimRequest is a claim as the caller asked for it.
type ClaimRequest struct {
	Owner    Owner
	Scopes   []string // canonical
	Access   string
	Lease    time.Duration // 0: the default for the scopes
	Subject  string
	Takeover bool
}

// Claim refuses a claim that overlaps another owner's open claim (checked
// against the tip the new commit will extend). With Takeover it releases
// the displaced claims in the same commit, but only when every conflicting
// owner has been silent for TakeoverSilence.
func Claim(req ClaimRequest) AppendFunc {
	return func(st *State, now time.Time) ([]*Fact, error) {
		if len(req.Scopes) == 0 {
			return nil, usagef("claim needs at least one scope")
		}
		access := normAccess(req.Access)
		lease := req.Lease
		if lease <= 0 {
			lease = DefaultLease(req.Scopes)
		}
		claim := &Fact{Kind: KindClaim, Tool: req.Owner.Tool, Session: req.Owner.Session,
			Scopes: req.Scopes, Access: access, LeaseS: int64(lease / time.Second), Subject: req.Subject}
		for _, c := range st.Claims.Near(req.Scopes[:1]) {
			if c.Owner() == req.Owner && sameSet(c.Scopes, req.Scopes) {
				claim.Ref = c.ID // a re-claim renews: it supersedes the claim it names
			}
		}
		conflicts := st.Conflicts(req.Owner, req.Scopes, access)
		if len(conflicts) == 0 {
			return []*Fact{claim}, nil
		}
		if !req.Takeover {
			e := st.conflictError(conflicts[0], req.Owner, now)
			e.All = []*ConflictError{e}
			for _, c := range conflicts[1:] {
				e.All = append(e.All, st.conflictError(c, req.Owner, now))
			}
			return nil, e
		}
		var out []*Fact
		seen := map[string]bool{}
		for _, c := range conflicts {
			o := c.Claim.Owner()
			last, _ := st.LastSeen(o)
			if silent := now.Sub(last); silent < TakeoverSilence {
				e := &RefusedError{Code: "takeover-too-early",
					Msg: fmt.Sprintf("takeover refused: %s was active %s ago; it holds %s (claim %s)", o, Ago(silent), c.Scope, c.Claim.ID),
					Hint: fmt.Sprintf("takeover is allowed from %s, after 2h of silence; until then `git rally handoff --target %s --subject \"need %s\"`",
						FormatTime(last.Add(TakeoverSilence)), o.Tool, c.Scope),
				}
				if o.Tool == req.Owner.Tool {
					e.Msg = fmt.Sprintf("takeover refused: your tool holds %s as %s (claim %s), active %s ago", c.Scope, OwnerLabel(o), c.Claim.ID, Ago(silent))
					e.Hint = fmt.Sprintf("takeover is allowed from %s, after 2h of silence; until then %s", FormatTime(last.Add(TakeoverSilence)), SelfHint(o, c.Claim.ID))
				}
				return nil, e
			}
			if seen[c.Claim.ID] {
				continue
			}
			seen[c.Claim.ID] = true
			out = append(out, &Fact{Kind: KindRelease, Tool: req.Owner.Tool, Session: req.Owner.Session,
				Ref: c.Claim.ID, Scopes: c.Claim.Scopes, Reason: "takeover",
				Subject: fmt.Sprintf("takeover from %s, silent %s", o, Ago(now.Sub(last)))})
		}
		return append(out, claim), nil
	}
}

// Release closes the caller's claims named by id or by scope: ids are
// claim ids found by the caller (resolved outside the lock); scope
// arguments are matched here against the caller's open claims. Releasing
// only claims of the caller's that are closed already writes nothing
// (NoChange); a claim id that a re-claim renewed releases the renewal.
func Release(o Owner, ids []string, scopes []string, reason string) AppendFunc {
	return ReleaseClaims(o, ids, nil, scopes, reason)
}

// ReleaseClaims is Release with the claim facts the ids name, so a claim
// of the caller's that is closed already is told from one that never was.
func ReleaseClaims(o Owner, ids []string, known []*Fact, scopes []string, reason string) AppendFunc {
	return func(st *State, now time.Time) ([]*Fact, error) {
		var closed, rest []string
		for i, id := range ids {
			if st.Claims.Get(id) == nil && i < len(known) && known[i].Owner() == o {
				if r := renewalOf(st, o, known[i]); r != nil {
					id = r.ID
				} else {
					closed = append(closed, id)
					continue
				}
			}
			rest = append(rest, id)
		}
		if len(closed) > 0 && len(rest) == 0 && len(scopes) == 0 {
			return nil, noChange("claim %s is closed already; nothing to release", strings.Join(closed, ", "))
		}
		return release(st, o, rest, scopes, reason)
	}
}

func release(st *State, o Owner, ids []string, scopes []string, reason string) ([]*Fact, error) {
	var out []*Fact
	done := map[string]bool{}
	add := func(c *Fact) {
		if done[c.ID] {
			return
		}
		done[c.ID] = true
		out = append(out, &Fact{Kind: KindRelease, Tool: o.Tool, Session: o.Session, Ref: c.ID, Scopes: c.Scopes, Reason: reason})
	}
	for _, id := range ids {
		c := st.Claims.Get(id)
		if c == nil {
			return nil, &UsageError{Msg: fmt.Sprintf("claim %s is not open", id), Hint: "git rally room"}
		}
		if c.Owner() != o {
			return nil, &RefusedError{Code: "not-owner", Msg: fmt.Sprintf("claim %s is held by %s, not %s; only the owner may release it", id, c.Owner(), o),
				Hint: fmt.Sprintf("git rally claim %s --takeover (after 2h of the owner's silence)", strings.Join(c.Scopes, " "))}
		}
		add(c)
	}
	for _, sc := range scopes {
		var mine, others []*Fact
		for _, c := range st.Claims.Near([]string{sc}) {
			if !containsStr(c.Scopes, sc) {
				continue
			}
			if c.Owner() == o {
				mine = append(mine, c)
			} else {
				others = append(others, c)
			}
		}
		if len(mine) == 0 {
			if len(others) > 0 {
				return nil, &RefusedError{Code: "not-owner", Msg: fmt.Sprintf("%s is held by %s, not %s; only the owner may release it", sc, others[0].Owner(), o)}
			}
			return nil, &UsageError{Msg: fmt.Sprintf("%s holds no open claim on %s", o, sc), Hint: "git rally room"}
		}
		for _, c := range mine {
			add(c)
		}
	}
	return out, nil
}

// renewalOf is the open claim of o that renewed claim c: a re-claim
// supersedes the claim it names, so it is the same claim.
func renewalOf(st *State, o Owner, c *Fact) *Fact {
	for _, oc := range st.OwnedClaims(o) {
		if oc.Ref == c.ID {
			return oc
		}
	}
	return nil
}

// LatestRenewal follows the re-claims of claim c through every fact of the
// ledger to the newest one of its owner, or c itself.
func LatestRenewal(all []*Fact, c *Fact) *Fact {
	next := map[string]*Fact{}
	for _, f := range all {
		if f.Kind == KindClaim && f.Ref != "" && f.Owner() == c.Owner() {
			next[f.Ref] = f
		}
	}
	for seen := 0; next[c.ID] != nil && seen < len(all); seen++ {
		c = next[c.ID]
	}
	return c
}

func containsStr(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// Answer writes a receipt, resolve or artifact that refers to target. Only
// a handoff's target may answer it (any peer but the sender for a handoff
// to all, and then only the first), and the sender cannot close its own.
// An answer already in effect writes nothing (NoChange).
func Answer(f *Fact, target *Fact) AppendFunc {
	return func(st *State, now time.Time) ([]*Fact, error) {
		if err := checkAnswer(st, f, target); err != nil {
			return nil, err
		}
		if err := answerInEffect(st, f, target); err != nil {
			return nil, err
		}
		return []*Fact{f}, nil
	}
}

func checkAnswer(st *State, f, target *Fact) error {
	if f.Kind == KindReceipt && target.Kind != KindHandoff {
		if a := st.Artifacts[target.ID]; f.Status != Rejected && target.Kind == KindArtifact && (target.Target == f.Tool || a != nil && a.For == f.Tool) {
			return nil // reviewed: an artifact made for the caller
		}
		what := "a " + target.Kind
		if target.Kind == KindArtifact {
			what = "an artifact not waiting for your review"
		}
		return &UsageError{Msg: fmt.Sprintf("%s is %s; receipt answers a handoff addressed to you", target.ID, what),
			Hint: "git rally inbox --tool " + f.Tool}
	}
	if f.Status == Rejected {
		if f.Kind != KindReceipt {
			return usagef("only a receipt rejects a handoff")
		}
		if strings.TrimSpace(f.Reason) == "" {
			return &UsageError{Msg: "a rejection needs --reason <text>: the sender reads it to reassign or withdraw",
				Hint: "git rally receipt " + target.ID + " --reject --reason \"...\""}
		}
		if target.Target == AllTarget {
			return &UsageError{Msg: fmt.Sprintf("handoff %s is addressed to all; leave it to another peer instead of rejecting it", target.ID)}
		}
	}
	if err := freezeLiftRefused(st, f, target); err != nil {
		return err
	}
	if target.Kind == KindHandoff {
		if f.Tool == target.Tool && f.Tool != target.Target {
			return &RefusedError{Code: "own-handoff", Msg: fmt.Sprintf("%s sent handoff %s; the sender cannot %s its own handoff", f.Tool, target.ID, f.Kind),
				Hint: "only the target " + target.Target + " answers it; retract it with `git rally retract " + target.ID + " --reason ...`"}
		}
		if !AddressedTo(target, f.Tool) {
			if f.Kind == KindArtifact {
				return nil // an artifact may cite any handoff; only the target's closes it
			}
			return &RefusedError{Code: "not-target", Msg: fmt.Sprintf("handoff %s is for %s, not %s; only the target may %s it", target.ID, target.Target, f.Tool, f.Kind),
				Hint: "git rally inbox --tool " + f.Tool}
		}
		if h := st.Handoffs()[target.ID]; h != nil && !h.mayAnswer(f.Tool) && f.Kind != KindArtifact {
			return &RefusedError{Code: "answered-by-other", Msg: fmt.Sprintf("handoff %s to all was answered by %s first; it is theirs", target.ID, h.AnsweredBy()),
				Hint: "git rally inbox --tool " + f.Tool}
		}
		return nil
	}
	if f.Kind == KindResolve && target.Kind != KindBlocker && target.Kind != KindRisk {
		return &UsageError{Msg: fmt.Sprintf("%s is a %s; resolve answers a handoff, a blocker or a risk", target.ID, target.Kind)}
	}
	return nil
}

// answerInEffect returns NoChange when the answer would change nothing: a
// second receipt, a receipt or resolve of a resolved handoff, resolving a
// blocker or risk that is not open.
func answerInEffect(st *State, f, target *Fact) error {
	if f.Kind == KindArtifact {
		return nil // a result is news even when the handoff is closed
	}
	switch target.Kind {
	case KindHandoff:
		if _, gone := st.Retraction[target.ID]; gone {
			return nil
		}
		h := st.Handoffs()[target.ID]
		if h == nil {
			return noChange("handoff %s is resolved already; nothing written", target.ID)
		}
		if h.Rejection != nil && f.Kind == KindReceipt {
			return noChange("you rejected handoff %s already (%s); retract the rejection to take it back: git rally retract %s --reason \"...\"", target.ID, h.Rejection.ID, h.Rejection.ID)
		}
		if f.Kind == KindReceipt && h.AnsweredBy() == f.Tool && f.Status != Rejected {
			return noChange("you acknowledged handoff %s already; resolve it when done: git rally resolve %s", target.ID, target.ID)
		}
	case KindBlocker:
		if f.Kind == KindResolve && st.Blockers[target.ID] == nil {
			return noChange("blocker %s is not open (resolved or retracted already); nothing written", target.ID)
		}
	case KindRisk:
		if f.Kind == KindResolve && st.Risks[target.ID] == nil {
			return noChange("risk %s is not open (resolved or retracted already); nothing written", target.ID)
		}
	}
	return nil
}

// Retract withdraws a fact of the caller's.
func Retract(o Owner, target *Fact, reason string) AppendFunc {
	return func(st *State, now time.Time) ([]*Fact, error) {
		if strings.TrimSpace(reason) == "" {
			return nil, &UsageError{Msg: "retract needs --reason", Hint: "git rally retract " + target.ID + " --reason \"...\""}
		}
		if target.Kind == KindLead {
			return nil, &UsageError{Msg: fmt.Sprintf("%s moved the lead seat; a lead fact is not retracted, the seat is moved", target.ID),
				Hint: "git rally lead handoff --to <tool>, or git rally lead relinquish"}
		}
		if target.Tool != o.Tool {
			return nil, &RefusedError{Code: "not-author", Msg: fmt.Sprintf("%s was written by %s, not %s; only the author may retract it", target.ID, target.Tool, o.Tool),
				Hint: "write a note or a risk that refers to it: git rally note --ref " + target.ID + " --subject \"...\""}
		}
		if r, done := st.Retraction[target.ID]; done {
			return nil, noChange("%s is retracted already (by %s); nothing written", target.ID, r)
		}
		return []*Fact{{Kind: KindRetract, Tool: o.Tool, Session: o.Session, Ref: target.ID, Reason: reason}}, nil
	}
}
