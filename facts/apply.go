package facts

import (
	"strings"
	"time"
)

// Forget drops such peers and artifacts. It depends on the facts
// alone, so a projection built at once and one built in steps forget the
// same things.
func (s *State) Forget() {
	newest, err := time.Parse(time.RFC3339Nano, s.Newest)
	if err != nil {
		return
	}
	old := newest.Add(-NoticeForget)
	s.forgetPlans(old)
	for id, a := range s.Artifacts {
		if t := a.Fact.Time(); !t.IsZero() && t.Before(old) {
			delete(s.Artifacts, id)
		}
	}
	cut := newest.Add(-PeerForget)
	holds := s.Claims.holders()
	for k, p := range s.Peers {
		t, err := time.Parse(time.RFC3339Nano, p.LastAt)
		if err == nil && t.Before(cut) && !holds(k) {
			delete(s.Peers, k)
		}
	}
}

// touch records activity: every fact an owner writes shows it is alive,
// retracted or not.
// key and at are f's key and time as the projection keeps them (keyAt).
func (s *State) touch(f *Fact, key Key, at string) {
	if f.Tool == "" || f.Tool == SystemTool {
		return
	}
	k := f.Owner().String()
	p := s.Peers[k]
	if p == nil {
		p = &Peer{Tool: s.own(f.Tool), Session: s.own(f.Session)}
		s.Peers[s.own(k)] = p // k is f.Tool itself when there is no session
	}
	if p.Last.Less(key) {
		p.Last = key
		p.LastAt = at
		// A stopped managed session has left the room as surely as one
		// that said leave: `git rally stop` writes the session's stopped
		// fact under the session's own identity.
		p.Left = f.Kind == KindLeave || f.Kind == KindSession && f.Status == "stopped"
		if f.Kind == KindPresence {
			p.Subject = s.own(f.Subject)
		}
		if f.Kind == KindStatus {
			p.Activity, p.ActivitySince = s.own(f.Status), at
		}
	}
}

// own is str as the projection may keep it: a copy while a shared fact
// is applied (ApplyBuiltShared), else str.
func (s *State) own(str string) string {
	if s.shared {
		return strings.Clone(str)
	}
	return str
}

// keyAt is f's key and time as the projection keeps them: for a shared
// fact, copied in one allocation (every fact sets the projection's and
// its author's last key and time).
func (s *State) keyAt(f *Fact) (Key, string) {
	if !s.shared {
		return f.Key(), f.At
	}
	both := f.ID + f.At
	return Key{f.Clock, both[:len(f.ID)]}, both[len(f.ID):]
}

// kindKey is f's kind as a key of ByKind: assigning to a map with a
// string key stores the key given, existing or not, so a shared fact's
// would stay there.
func (s *State) kindKey(kind string) string {
	if !s.shared {
		return kind
	}
	for _, k := range Kinds {
		if k == kind {
			return k
		}
	}
	return strings.Clone(kind)
}

// retract undoes the target in place when the state holds it.
func (s *State) retract(r *Fact) error {
	id := r.Ref
	if _, done := s.Retraction[id]; done {
		return nil
	}
	author := func(f *Fact) bool { return f.Tool == r.Tool }
	switch {
	case s.Claims.Get(id) != nil:
		c := s.Claims.Get(id)
		if !author(c) {
			return nil
		}
		// A renewal and the claim it renewed are one claim: the
		// superseded one is gone already and stays gone.
		if holdsTask(c) {
			return ErrRebuild // a report made while it held a task stops counting
		}
		s.Claims.Delete(id)
	case s.Handoffs()[id] != nil:
		if !author(s.Handoffs()[id].Fact) {
			return nil
		}
		if s.Handoffs()[id].Fact.Ref != "" {
			return ErrRebuild // it may have reassigned a rejected handoff
		}
		delete(s.Handoffs(), id)
	case s.Blockers[id] != nil:
		if !author(s.Blockers[id]) {
			return nil
		}
		delete(s.Blockers, id)
	case s.Risks[id] != nil:
		if !author(s.Risks[id]) {
			return nil
		}
		delete(s.Risks, id)
	case s.answeredBy(id) != nil:
		h := s.answeredBy(id)
		if h.AnsweredBy() != r.Tool {
			return nil
		}
		if h.Rejection != nil && h.Rejection.ID == id {
			return ErrRebuild // another rejection may hold in its place
		}
		delete(h.Answers, id)
		delete(s.Artifacts, id)
		if len(h.Answers) == 0 {
			h.Answerer = ""
		}
	case s.Artifacts[id] != nil && s.Artifacts[id].Fact.Ref == "":
		if !author(s.Artifacts[id].Fact) {
			return nil
		}
		delete(s.Artifacts, id)
	default:
		// The target is closed, or a kind the state does not keep
		// (note, presence): rebuild to find out what it changed.
		return ErrRebuild
	}
	s.Retraction[id] = r.ID
	return nil
}

func (s *State) answeredBy(id string) *Handoff {
	for _, h := range s.Handoffs() {
		if _, ok := h.Answers[id]; ok {
			return h
		}
	}
	return nil
}

func (s *State) apply(f *Fact) {
	switch f.Kind {
	case KindClaim:
		s.supersede(f)
		s.Claims.Put(f)
	case KindRelease:
		if f.Ref != "" {
			if c := s.Claims.Get(f.Ref); c != nil && (c.Owner() == f.Owner() || f.Reason == "takeover") {
				s.Claims.Delete(f.Ref)
			}
			return
		}
		for _, c := range s.Claims.Near(f.Scopes) {
			if c.Owner() == f.Owner() && shareScope(c.Scopes, f.Scopes) {
				s.Claims.Delete(c.ID)
			}
		}
	case KindClaimExpired:
		s.Claims.Delete(f.Ref)
	case KindLeave:
		for _, c := range s.Claims.Owned(f.Owner()) {
			s.Claims.Delete(c.ID)
		}
	case KindHandoff:
		// A handoff that names a rejected handoff of its sender's
		// reassigns it: the rejected one is closed.
		if old := s.Handoffs()[f.Ref]; f.Ref != "" && old != nil && old.Fact.Tool == f.Tool && old.State() == Rejected {
			delete(s.Handoffs(), f.Ref)
		}
		s.Handoffs()[f.ID] = &Handoff{Fact: f, Answers: map[string]string{}}
	case KindReceipt, KindResolve, KindArtifact:
		s.applyPlan(f)
		s.answer(f)
	case KindPlan:
		s.applyPlan(f)
	case KindLead:
		s.applyLead(f)
	case KindBlocker:
		s.Blockers[f.ID] = f
	case KindRisk:
		s.Risks[f.ID] = f
		if strings.HasPrefix(f.Subject, "no-response:") {
			if h := s.Handoffs()[f.Ref]; h != nil && h.Overdue == "" {
				h.Overdue = f.ID
			}
		}
		if strings.HasPrefix(f.Subject, "claim-contested") && f.Ref != "" {
			s.Contest[f.Ref] = f.ID
		}
	case KindSession:
		if f.Name != "" {
			s.Sessions[f.Name] = f
		}
	case KindDelivery:
		if h := s.Handoffs()[f.Ref]; h != nil {
			h.Delivery = f.Status
		}
	}
}

// supersede ends the claim a re-claim renews (named in its ref).
func (s *State) supersede(f *Fact) {
	if f.Kind != KindClaim || f.Ref == "" {
		return
	}
	if c := s.Claims.Get(f.Ref); c != nil && c.Owner() == f.Owner() {
		s.Claims.Delete(f.Ref)
	}
}

func (s *State) answer(f *Fact) {
	if f.Kind == KindArtifact && f.Target != "" {
		s.Artifacts[f.ID] = &Artifact{Fact: f, For: f.Target}
	}
	if f.Ref == "" {
		return
	}
	if h := s.Handoffs()[f.Ref]; h != nil {
		switch {
		case h.mayAnswer(f.Tool):
			h.Answers[f.ID] = f.Kind
			h.Answerer = f.Tool
			if f.Kind == KindReceipt && f.Status == Rejected && h.Fact.Target != AllTarget && h.Rejection == nil {
				h.Rejection = f // the first rejection holds
			}
			if f.Kind == KindArtifact {
				s.Artifacts[f.ID] = &Artifact{Fact: f, For: h.Fact.Tool}
			}
			if h.State() == "resolved" {
				delete(s.Handoffs(), f.Ref)
			}
		case f.Tool == SystemTool && f.Kind == KindResolve && f.Status == "expired":
			h.Expired = f.ID
		}
		return
	}
	if f.Kind == KindResolve {
		delete(s.Blockers, f.Ref)
		delete(s.Risks, f.Ref)
	}
	if f.Kind == KindReceipt {
		if a := s.Artifacts[f.Ref]; a != nil && a.For == f.Tool {
			delete(s.Artifacts, f.Ref)
		}
	}
}

// ApplyBuiltShared is ApplyBuilt for a fact the caller decodes the next
// line into (a rebuild's second pass reuses one Fact for every line): f's
// strings must stay as they are (slices of its stored line, never written
// again), f itself will not. Where the projection may keep the fact (a
// claim, a handoff, a plan's answer ...) it applies own's copy, asked
// for only then; of any other fact it keeps copies of the few strings
// its counts and its author's peer record take. Most facts of a long
// ledger are kept by nothing (at a million facts a copy of each was 638
// MB of a cold read's 1.4 GB allocated).
func (s *State) ApplyBuiltShared(f *Fact, own func() *Fact) {
	if s.keeps(f) {
		s.ApplyBuilt(own())
		return
	}
	s.shared = true
	s.ApplyBuilt(f)
	s.shared = false
}

// keeps reports whether applying f may keep f itself or a string of it
// other than those own and keyAt copy: it errs towards keeping. It
// follows apply: every case that stores f, or a string of f, is here.
func (s *State) keeps(f *Fact) bool {
	if Kept(f) {
		return true
	}
	switch f.Kind {
	case KindReceipt, KindResolve, KindArtifact:
		return f.Ref != "" && (s.Handoffs()[f.Ref] != nil || s.Plans[f.Ref] != nil)
	case KindDelivery:
		return f.Ref != "" && s.Handoffs()[f.Ref] != nil
	}
	return false
}

// Kept reports whether a projection may keep f whatever it holds: a
// claim, a handoff, a plan, the lead, a blocker, a risk, a session, an
// artifact for a peer (a caller decoding in bulk copies these at once).
func Kept(f *Fact) bool {
	switch f.Kind {
	case KindClaim, KindHandoff, KindLead, KindBlocker, KindRisk:
		return true
	case KindPlan:
		return f.Subject != ""
	case KindSession:
		return f.Name != ""
	case KindArtifact:
		return f.Target != ""
	}
	return false
}

// ApplyBuilt applies one fact of a projection built at once, in (clock, id)
// order, with the retractions already known (BuildAt).
func (s *State) ApplyBuilt(f *Fact) {
	if s.held(f) {
		return
	}
	s.count(f)
	if _, gone := s.Retraction[f.ID]; gone {
		s.supersede(f) // a retracted renewal still ends the claim it renewed
		return
	}
	if f.Kind == KindRetract {
		return
	}
	s.apply(f)
}
