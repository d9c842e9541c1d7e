package facts

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-rally/git-rally/refs"
)

// ReapItem is a claim the reaper may close or a handoff the 30-day sweep
// may expire.
type ReapItem struct {
	Kind   string // claim or handoff
	ID     string
	Owner  Owner
	Target string
	Reason string
	Scopes []string
	Since  time.Time // lease expiry, or the handoff's time
}

// ReapCandidates lists claims whose lease expired and whose owner has been
// silent for the lease window (never an active owner's), unresolved
// handoffs older than HandoffExpiry that were not swept yet, and a lead
// silent more than LeadSilence.
func (s *State) ReapCandidates(now time.Time) []ReapItem {
	var out []ReapItem
	for _, c := range s.ClaimViews(now) {
		if c.LeaseState != "expired" || c.OwnerState == Active {
			continue
		}
		last, _ := s.LastSeen(c.Fact.Owner())
		lease := time.Duration(c.Fact.LeaseS) * time.Second
		if lease <= 0 {
			lease = DefaultLease(c.Fact.Scopes)
		}
		if now.Sub(last) < lease {
			continue
		}
		out = append(out, ReapItem{Kind: "claim", ID: c.Fact.ID, Owner: c.Fact.Owner(), Scopes: c.Fact.Scopes,
			Reason: "lease-expired", Since: c.LeaseExpires})
	}
	for _, h := range s.sortedHandoffs() {
		if h.Expired != "" || now.Sub(h.Fact.Time()) < HandoffExpiry {
			continue
		}
		out = append(out, ReapItem{Kind: "handoff", ID: h.Fact.ID, Owner: h.Fact.Owner(), Target: h.Fact.Target,
			Reason: "handoff-expired", Since: h.Fact.Time()})
	}
	if it := s.staleLead(now); it != nil {
		out = append(out, *it)
	}
	return out
}

// Reap writes one claim.expired per reapable claim and one expiry per old
// handoff, authored by rally, recomputed under the lock.
func Reap() AppendFunc {
	return func(st *State, now time.Time) ([]*Fact, error) {
		var out []*Fact
		for _, it := range st.ReapCandidates(now) {
			switch it.Kind {
			case "claim":
				out = append(out, &Fact{Kind: KindClaimExpired, Tool: SystemTool, Ref: it.ID, Scopes: it.Scopes, Reason: it.Reason,
					Subject: fmt.Sprintf("reaper: claim %s of %s expired (lease ended %s, owner silent)", it.ID, it.Owner, FormatTime(it.Since))})
			case "handoff":
				days := int(now.Sub(it.Since).Hours() / 24)
				out = append(out, &Fact{Kind: KindResolve, Tool: SystemTool, Ref: it.ID, Status: "expired", Reason: it.Reason,
					Subject: fmt.Sprintf("reaper: handoff %s expired unanswered after %d days (from %s to %s)", it.ID, days, it.Owner.Tool, it.Target)})
			case "lead":
				out = append(out, staleLeadFact(it, now))
			}
		}
		return out, nil
	}
}

// Problem is an integrity finding of doctor.
type Problem struct {
	Code, Message, Path string
}

// Doctor checks the ledger at its head: every line parses and carries the
// id of its content, no id repeats, clocks grow along the first-parent
// history (up to maxCommits), objects are present, the format is known,
// and no ref lock file is left over.
func (l *Ledger) Doctor(maxCommits int) ([]Problem, error) {
	var ps []Problem
	if p, mod, ok := l.Store.RefLockFile(LedgerRef); ok {
		ps = append(ps, Problem{Code: "lock-file", Path: p,
			Message: fmt.Sprintf("%s exists (modified %s): a git process is updating the ledger, or one was killed while it did; the next append removes it only if a killed rally left it; otherwise remove it when no git process is running", p, FormatTime(mod))})
	}
	for _, p := range l.Store.TrackingLocks() {
		ref := strings.TrimSuffix(filepath.ToSlash(p[len(l.Store.CommonDir)+1:]), ".lock")
		ps = append(ps, Problem{Code: "lock-file", Path: p,
			Message: fmt.Sprintf("%s exists: a `git fetch` is updating %s in this clone, or one was killed while it did, and every fetch of the ledger fails until it goes; if no git process is running: rm %s", p, ref, p)})
	}
	head, err := l.Head()
	if err != nil {
		return append(ps, Problem{Code: "bad-ref", Message: err.Error()}), nil
	}
	if head.IsZero() {
		return ps, nil
	}
	c, err := l.Store.ReadCommit(head)
	if err != nil {
		return append(ps, Problem{Code: "missing-object", Message: err.Error()}), nil
	}
	root, err := l.Store.ReadTree(c.Tree)
	if err != nil {
		return append(ps, Problem{Code: "missing-object", Message: err.Error()}), nil
	}
	format := false
	for _, e := range root {
		if e.Name == FormatFile && !e.Dir {
			format = true
			b, err := l.Store.ReadBlob(e.Hash)
			switch {
			case err != nil:
				ps = append(ps, Problem{Code: "missing-object", Path: FormatFile, Message: err.Error()})
			case string(b) != FormatContent:
				ps = append(ps, Problem{Code: "format", Message: fmt.Sprintf("unknown ledger format %q", strings.TrimSpace(string(b)))})
			}
		}
	}
	if !format {
		ps = append(ps, Problem{Code: "format", Message: "no format marker at the ledger root"})
	}
	blobs, err := l.diff(refHashZero, c.Tree)
	if err != nil {
		return append(ps, Problem{Code: "missing-object", Message: err.Error()}), nil
	}
	seen := map[string]string{}
	for _, b := range blobs {
		data, err := l.Store.ReadBlob(b.hash)
		if errors.Is(err, refs.ErrTooLarge) {
			ps = append(ps, Problem{Code: "oversize", Path: b.path, Message: err.Error()})
			continue
		}
		if err != nil {
			ps = append(ps, Problem{Code: "missing-object", Path: b.path, Message: err.Error()})
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			f, err := Parse([]byte(line))
			if err != nil {
				ps = append(ps, Problem{Code: "unparsable", Path: b.path, Message: err.Error()})
				continue
			}
			if id, err := ComputeID([]byte(line)); err != nil || id != f.ID {
				ps = append(ps, Problem{Code: "bad-id", Path: b.path, Message: fmt.Sprintf("fact %s: its content hashes to %s", Sanitize(f.ID, 40), id)})
			} else if c := checkStored(f, []byte(line), ""); c != nil {
				ps = append(ps, Problem{Code: c.Code, Path: b.path, Message: c.Message})
			} else if f.Time().After(l.horizon()) {
				ps = append(ps, Problem{Code: "future-time", Path: b.path,
					Message: fmt.Sprintf("fact %s is dated %s, in the future: held back until then", f.ID, Sanitize(f.At, 40))})
			}
			if prev, dup := seen[f.ID]; dup {
				ps = append(ps, Problem{Code: "duplicate-id", Path: b.path, Message: fmt.Sprintf("fact %s also at %s", Sanitize(f.ID, 40), prev)})
			}
			seen[f.ID] = b.path
			if !strings.HasSuffix(b.path, "/"+f.ID+".json") {
				ps = append(ps, Problem{Code: "misplaced", Path: b.path, Message: fmt.Sprintf("fact %s is stored under another name", Sanitize(f.ID, 40))})
			}
		}
	}
	cps, err := l.checkClocks(head, maxCommits)
	if err != nil {
		ps = append(ps, Problem{Code: "missing-object", Message: err.Error()})
	}
	return append(ps, cps...), nil
}

// checkClocks walks the first-parent history from the root and checks that
// each commit's new facts have clocks above every clock its parent held.
func (l *Ledger) checkClocks(head refHash, maxCommits int) ([]Problem, error) {
	type step struct {
		tree    refHash
		parent  refHash
		isMerge bool
	}
	var chain []step
	for h := head; !h.IsZero(); {
		if len(chain) >= maxCommits {
			return nil, nil // too long to walk here; the other checks still ran
		}
		c, err := l.Store.ReadCommit(h)
		if err != nil {
			return nil, err
		}
		s := step{tree: c.Tree, isMerge: len(c.Parents) > 1 || strings.HasPrefix(c.Message, HealPrefix)}
		if len(c.Parents) > 0 {
			s.parent = c.Parents[0]
		}
		chain = append(chain, s)
		h = s.parent
	}
	var ps []Problem
	var max int64
	prevTree := refHashZero
	for i := len(chain) - 1; i >= 0; i-- {
		s := chain[i]
		added, err := l.diff(prevTree, s.tree)
		if err != nil && !errors.Is(err, errShrank) {
			return ps, err
		}
		var top int64
		for _, f := range l.parseBlobs(added) {
			if !s.isMerge && f.Clock <= max {
				ps = append(ps, Problem{Code: "clock", Message: fmt.Sprintf("fact %s has clock %d, not above %d already in the ledger its author read", f.ID, f.Clock, max)})
			}
			if f.Clock > top {
				top = f.Clock
			}
		}
		if top > max {
			max = top
		}
		prevTree = s.tree
	}
	return ps, nil
}
