package facts

import (
	"fmt"
	"strings"
	"time"
)

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
		for _, c := range st.OwnedClaims(req.Owner) {
			if sameSet(c.Scopes, req.Scopes) {
				claim.Ref = c.ID // a re-claim renews: it supersedes the claim it names
			}
		}
		conflicts := st.Conflicts(req.Owner, req.Scopes, access)
		if len(conflicts) == 0 {
			return []*Fact{claim}, nil
		}
		if !req.Takeover {
			return nil, st.conflictError(conflicts[0], req.Owner, now)
		}
		var out []*Fact
		seen := map[string]bool{}
		for _, c := range conflicts {
			o := c.Claim.Owner()
			last, _ := st.LastSeen(o)
			if silent := now.Sub(last); silent < TakeoverSilence {
				return nil, &RefusedError{
					Msg: fmt.Sprintf("takeover refused: %s was active %s ago; it holds %s (claim %s)", o, Ago(silent), c.Scope, c.Claim.ID),
					Hint: fmt.Sprintf("takeover is allowed from %s, after 2h of silence; until then `git rally handoff --target %s --subject \"need %s\"`",
						FormatTime(last.Add(TakeoverSilence)), o.Tool, c.Scope),
				}
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

// Release closes the caller's claims named by id or by scope. resolved maps
// each argument to claim ids found by the caller (ids resolved outside the
// lock); scope arguments are matched here against the caller's open claims.
func Release(o Owner, ids []string, scopes []string, reason string) AppendFunc {
	return func(st *State, now time.Time) ([]*Fact, error) {
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
			c := st.Claims[id]
			if c == nil {
				return nil, &UsageError{Msg: fmt.Sprintf("claim %s is not open", id), Hint: "git rally room"}
			}
			if c.Owner() != o {
				return nil, &RefusedError{Msg: fmt.Sprintf("claim %s is held by %s, not %s; only the owner may release it", id, c.Owner(), o),
					Hint: fmt.Sprintf("git rally claim %s --takeover (after 2h of the owner's silence)", strings.Join(c.Scopes, " "))}
			}
			add(c)
		}
		for _, sc := range scopes {
			var mine, others []*Fact
			for _, c := range st.SortedClaims() {
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
					return nil, &RefusedError{Msg: fmt.Sprintf("%s is held by %s, not %s; only the owner may release it", sc, others[0].Owner(), o)}
				}
				return nil, &UsageError{Msg: fmt.Sprintf("%s holds no open claim on %s", o, sc), Hint: "git rally room"}
			}
			for _, c := range mine {
				add(c)
			}
		}
		return out, nil
	}
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
// a handoff's target may answer it, and the sender cannot close its own.
func Answer(f *Fact, target *Fact) AppendFunc {
	return func(st *State, now time.Time) ([]*Fact, error) {
		if err := checkAnswer(f, target); err != nil {
			return nil, err
		}
		return []*Fact{f}, nil
	}
}

func checkAnswer(f, target *Fact) error {
	if target.Kind == KindHandoff {
		if f.Tool == target.Tool && f.Tool != target.Target {
			return &RefusedError{Msg: fmt.Sprintf("%s sent handoff %s; the sender cannot %s its own handoff", f.Tool, target.ID, f.Kind),
				Hint: "only the target " + target.Target + " answers it; retract it with `git rally retract " + target.ID + " --reason ...`"}
		}
		if f.Tool != target.Target {
			if f.Kind == KindArtifact {
				return nil // an artifact may cite any handoff; only the target's closes it
			}
			return &RefusedError{Msg: fmt.Sprintf("handoff %s is for %s, not %s; only the target may %s it", target.ID, target.Target, f.Tool, f.Kind),
				Hint: "git rally inbox --tool " + f.Tool}
		}
		return nil
	}
	if f.Kind == KindResolve && target.Kind != KindBlocker && target.Kind != KindRisk {
		return &UsageError{Msg: fmt.Sprintf("%s is a %s; resolve answers a handoff, a blocker or a risk", target.ID, target.Kind)}
	}
	return nil
}

// Retract withdraws a fact of the caller's.
func Retract(o Owner, target *Fact, reason string) AppendFunc {
	return func(st *State, now time.Time) ([]*Fact, error) {
		if strings.TrimSpace(reason) == "" {
			return nil, &UsageError{Msg: "retract needs --reason", Hint: "git rally retract " + target.ID + " --reason \"...\""}
		}
		if target.Tool != o.Tool {
			return nil, &RefusedError{Msg: fmt.Sprintf("%s was written by %s, not %s; only the author may retract it", target.ID, target.Tool, o.Tool),
				Hint: "write a note or a risk that refers to it: git rally note --ref " + target.ID + " --subject \"...\""}
		}
		return []*Fact{{Kind: KindRetract, Tool: o.Tool, Session: o.Session, Ref: target.ID, Reason: reason}}, nil
	}
}
