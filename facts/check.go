package facts

import (
	"fmt"
	"time"
)

// Finding codes and severities of the write check.
const (
	ClaimedPath     = "claimed-path"
	StaleOwnerClaim = "stale-owner-claim"
	ActiveBlocker   = "active-blocker"
	OwnClaim        = "own-claim"
	Unclaimed       = "unclaimed"
	AdvisoryClaim   = "advisory-claim"
	RoomFreeze      = "room-freeze"      // the lead's unscoped blocker (§19)
	UnscopedBlocker = "unscoped-blocker" // anyone else's

	SevStop = "stop"
	SevWarn = "warn"
	SevInfo = "info"
)

// Finding is one answer of the write check about one path.
type Finding struct {
	Code, Severity, Path, Claim, Message string
	Owner                                Owner
}

// CheckResult is the write check's answer: allow is false when a finding
// says stop.
type CheckResult struct {
	Allow    bool
	Findings []Finding
}

// CheckBeforeWrite reads the room for each repository path and says
// whether me may write it. It appends nothing: the advice may allow (with
// a warning) a write that a claim would refuse, because the record and the
// advice differ on purpose.
func (s *State) CheckBeforeWrite(me Owner, paths []string, now time.Time) CheckResult {
	scopes := make([]Scope, len(paths))
	for i, p := range paths {
		scopes[i] = Scope{"file", p}
	}
	return s.CheckScopes(me, scopes, now)
}

// CheckScopes is the write check for any scopes: a file is a path, and a
// dir, a glob, a port or a service is answered against the claims it
// overlaps by the rules of claims. A finding names the scope the covering
// claim holds. Findings carry the path of a file scope, else the scope.
func (s *State) CheckScopes(me Owner, asked []Scope, now time.Time) CheckResult {
	return s.checkScopes(me, asked, now, nil)
}

// checkScopes is CheckScopes counting, when compared is not nil, the
// exact scope comparisons it made.
func (s *State) checkScopes(me Owner, asked []Scope, now time.Time, compared *int) CheckResult {
	res := CheckResult{Allow: true}
	ix := overlapIndex{compared: compared}
	var blockers, unscoped []*Fact
	for _, b := range sortedFacts(s.Blockers) {
		if Unscoped(b) {
			unscoped = append(unscoped, b)
		} else {
			blockers = append(blockers, b)
		}
	}
	lead := s.LeadHolder()
	for _, q := range asked {
		p := q.String()
		if q.Kind == "file" {
			p = q.Value
		}
		covered := false
		for _, c := range s.Claims.Near([]string{q.String()}) {
			held, ok := ix.first(c, q)
			if !ok {
				continue
			}
			covered = true
			f := Finding{Path: p, Claim: c.ID, Owner: c.Owner()}
			state := s.OwnerState(c.Owner(), now)
			last, _ := s.LastSeen(c.Owner())
			what := held
			if held != q.String() {
				what = fmt.Sprintf("%s, which covers %s,", held, p)
			}
			switch {
			case c.Owner() == me:
				f.Code, f.Severity = OwnClaim, SevInfo
				f.Message = fmt.Sprintf("you hold %s (claim %s)", held, c.ID)
			case normAccess(c.Access) == Advisory:
				f.Code, f.Severity = AdvisoryClaim, SevInfo
				f.Message = fmt.Sprintf("%s marked %s as advisory (claim %s)", c.Owner(), held, c.ID)
			case state == Active && c.Tool == me.Tool:
				f.Code, f.Severity = ClaimedPath, SevStop
				f.Message = fmt.Sprintf("your tool holds %s as %s (claim %s), another identity than this one; %s",
					what, OwnerLabel(c.Owner()), c.ID, SelfHint(c.Owner(), c.ID))
			case state == Active:
				f.Code, f.Severity = ClaimedPath, SevStop
				f.Message = fmt.Sprintf("%s holds %s (claim %s) and was active %s ago; ask with `git rally handoff --target %s`",
					c.Owner(), what, c.ID, Ago(now.Sub(last)), c.Tool)
			default:
				f.Code, f.Severity = StaleOwnerClaim, SevWarn
				// The code is the SPEC's (§4: idle or stale); the text
				// names the state as the room does.
				f.Message = fmt.Sprintf("%s holds %s (claim %s) but is not active (%s, last active %s ago); writing is allowed, claiming is not until it is released or taken over",
					c.Owner(), what, c.ID, state, Ago(now.Sub(last)))
			}
			res.add(f)
		}
		for _, b := range blockers {
			held, ok := ix.first(b, q)
			if !ok {
				continue
			}
			covered = true
			res.add(Finding{Code: ActiveBlocker, Severity: SevStop, Path: p, Claim: b.ID, Owner: b.Owner(),
				Message: fmt.Sprintf("blocker %s by %s on %s covers %s: %s; lift it with `git rally resolve %s`", b.ID, b.Owner(), held, p, b.Subject, b.ID)})
		}
		for _, b := range unscoped {
			f := Finding{Path: p, Claim: b.ID, Owner: b.Owner()}
			switch {
			case b.Tool == lead && me.Tool != lead:
				f.Code, f.Severity, f.Message = RoomFreeze, SevStop, freezeMessage(b, p)
			case b.Tool == lead:
				// SPEC §4: the lead's own freeze is, for the lead, an
				// unscoped blocker (a warning), not a stop.
				f.Code, f.Severity = UnscopedBlocker, SevWarn
				f.Message = fmt.Sprintf("your blocker %s freezes the room for everyone else; lift it with `git rally resolve %s`", b.ID, b.ID)
			default:
				f.Code, f.Severity = UnscopedBlocker, SevWarn
				f.Message = fmt.Sprintf("blocker %s by %s has no scope: %s (only the lead's unscoped blocker stops writes)", b.ID, b.Owner(), Sanitize(b.Subject, 200))
			}
			res.add(f)
		}
		if !covered {
			res.add(Finding{Code: Unclaimed, Severity: SevInfo, Path: p, Message: "nobody claims " + p})
		}
	}
	return res
}

func (r *CheckResult) add(f Finding) {
	if f.Severity == SevStop {
		r.Allow = false
	}
	r.Findings = append(r.Findings, f)
}
