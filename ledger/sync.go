package ledger

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// SyncOptions say where and how to sync.
type SyncOptions struct {
	Remote string
	// Dir is where git runs (a worktree, or the git dir of a bare
	// repository), so the remote's configuration applies.
	Dir string
	// Push publishes the merged ledger; without it sync only fetches and
	// merges.
	Push bool
	// Progress receives git's transfer progress; nil keeps git quiet.
	Progress io.Writer
	// A rejected push is fetched, merged and pushed again for as long as
	// the remote keeps moving (others land: the system makes progress),
	// within MaxRounds rounds (default 1000). The remote standing still
	// while every push is rejected (a lock there that never clears, a
	// server that refuses without saying so) ends it: Stalled rounds in a
	// row that found it where it was (default 8), or Timeout (default 2
	// minutes) since the last round that found it moved. Time spent while
	// others keep landing is not bounded: each lost race is someone's
	// progress, and under load fifty clones queueing for one ref take
	// minutes.
	MaxRounds int
	Timeout   time.Duration
	Stalled   int
	// Backoff is the pause before round n (n >= 2); nil pauses a jittered,
	// exponentially growing while, so clones that collide do not collide
	// again in lockstep. Now measures Timeout (default time.Now).
	Backoff func(round int) time.Duration
	Now     func() time.Time
}

// SyncResult reports a sync.
type SyncResult struct {
	Remote string
	// Healed: objects of this clone's ledger history were missing and
	// the facts were written back from the cache (Heal) before the push.
	Healed bool
	// Fetched: the remote has a ledger and it was fetched.
	Fetched bool
	// NewFacts: facts the local ledger gained from the remote.
	NewFacts int
	// Merge is the strongest merge that happened: none, fast-forward or
	// merge.
	Merge string
	// Pushed: the remote's ledger now has the local one.
	Pushed bool
	// Head and RemoteHead are the local ledger and the remote's as last
	// seen (after a successful push, the same).
	Head, RemoteHead refs.Hash
	// Rounds counts fetch-merge-push rounds (more than one after a
	// rejected push).
	Rounds int
	// Risks are the claim-contested risks this sync recorded; Retracted
	// the retractions of risks recorded here earlier that lost the race
	// to the same risk published by another clone.
	Risks, Retracted []*facts.Fact
	// Rewritten: facts this clone saw on the remote before are gone from
	// it; Missing counts them. The union is pushed back (unless --no-push).
	Rewritten bool
	Missing   int
}

// trackingRef is where the remote's ledger is fetched to.
func trackingRef(remote string) string { return "refs/rally-remotes/" + remote + "/ledger" }

// FetchRefspec fetches every ref under refs/rally/ of a remote into
// refs/rally-remotes/<remote>/. The wildcard matters: an exact refspec
// makes `git fetch` fail outright ("couldn't find remote ref") on a remote
// that has no ledger yet, while a pattern that matches nothing is fine.
func FetchRefspec(remote string) string {
	return "+refs/rally/*:refs/rally-remotes/" + remote + "/*"
}

// Sync fetches the remote's ledger into refs/rally-remotes/<remote>/ledger,
// merges it into the local ledger, records any contested claim once, and
// pushes the result without force. A rejected push (the remote moved) is
// fetched, merged and pushed again while the remote keeps moving, within
// the bounds of SyncOptions; a sync that gives up says why
// (SyncGaveUpError, inside a FailedError with the advice).
//
// A remote whose ledger lost facts this clone saw there before (its
// history was rewritten, or the ref deleted) is reported in the result
// and healed: the remembered remote head is merged too, so nothing local
// is lost, and the union is pushed. No force is needed for that: the
// merge commit has the remote's current head as a parent, so the push is a
// fast-forward of what the remote holds now.
func (l *Ledger) Sync(o SyncOptions) (*SyncResult, error) {
	if o.MaxRounds <= 0 {
		o.MaxRounds = 1000
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Minute
	}
	if o.Stalled <= 0 {
		o.Stalled = 8
	}
	if o.Backoff == nil {
		o.Backoff = defaultBackoff
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	q, err := refs.QueueLock(l.Store.CommonDir, "sync")
	if err != nil {
		return nil, err
	}
	defer refs.UnlockQueue(q)
	start := o.Now() // the time bounds are this sync's, not its wait for another's
	moved := start   // when a round last found the remote moved
	memo := loadSyncMemo(l.Store.CommonDir)
	track := trackingRef(o.Remote)
	res := &SyncResult{Remote: o.Remote, Merge: MergeNone}
	ensure := false
	var last refs.Hash // the remote's head as the previous round fetched it
	stalled := 0       // rounds in a row that found it there
	dropped := 0       // transfers in a row whose connection broke
	// lost is a fetch or push whose connection broke: the round is tried
	// again, maxDropped times in a row at most.
	lost := func(what string, err error) (bool, error) {
		if !refs.ConnectionLost(err) {
			return false, nil
		}
		dropped++
		if dropped >= maxDropped || res.Rounds >= o.MaxRounds {
			return true, fmt.Errorf("%s %s: the connection broke %d times in a row: %w", what, o.Remote, dropped, err)
		}
		return true, nil
	}
	for round := 1; ; round++ {
		res.Rounds = round
		if round > 1 {
			time.Sleep(o.Backoff(round))
		}
		before, err := l.Store.ReadRef(track)
		if err != nil {
			return res, err
		}
		theirs, err := l.Store.FetchTracking(o.Dir, o.Remote, LedgerRef, track, o.Progress)
		var le *refs.LockedError
		if errors.As(err, &le) {
			// A lock here, in this clone, not on the remote.
			return res, &facts.FailedError{Err: fmt.Errorf("updating %s, this clone's copy of %s's ledger: %w", track, o.Remote, err), Hint: le.Hint()}
		}
		if err != nil && !res.Healed {
			// git fetch walks the local refs too: a ledger whose history
			// lost objects here fails it ("bad object"), not the remote.
			if head, herr := l.Head(); herr == nil && !head.IsZero() && !l.whole(head) {
				if _, herr := l.Heal(); herr != nil {
					return res, historyFailure(herr)
				}
				res.Healed = true
				theirs, err = l.Store.FetchTracking(o.Dir, o.Remote, LedgerRef, track, o.Progress)
			}
		}
		if again, lerr := lost("fetching the ledger from", err); lerr != nil {
			return res, lerr
		} else if again {
			continue
		}
		if err != nil {
			return res, fmt.Errorf("fetching the ledger from %s: %w", o.Remote, err)
		}
		res.RemoteHead = theirs
		if round > 1 && theirs == last {
			stalled++
		} else {
			stalled = 0
		}
		last = theirs
		res.Fetched = res.Fetched || !theirs.IsZero()
		// Facts seen on the remote before (at our last sync, or by a
		// plain git fetch since) that it no longer has.
		for _, seen := range uniqueHashes(memo.seen(o.Remote), before) {
			if seen == theirs || !l.Store.HasObject(seen) {
				continue
			}
			n, err := l.Missing(seen, theirs)
			if err != nil {
				return res, err
			}
			if n == 0 {
				continue
			}
			res.Rewritten = true
			if n > res.Missing {
				res.Missing = n
			}
			mr, err := l.Merge(seen, MergeOptions{From: o.Remote + " as seen before (facts it lost)"})
			if err != nil {
				return res, err
			}
			res.note(mr)
		}
		l.noteMine(memo, theirs)
		mr, err := l.Merge(theirs, MergeOptions{From: o.Remote, EnsureAncestor: ensure})
		if err != nil {
			return res, fmt.Errorf("merging the ledger of %s: %w", o.Remote, err)
		}
		res.note(mr)
		written, err := l.Append(facts.ContestRisks(memo.Pending, memo.mineTest()))
		if err != nil {
			return res, err
		}
		for _, f := range written {
			if f.Kind == facts.KindRisk {
				res.Risks = append(res.Risks, f)
				memo.Pending = append(memo.Pending, f.ID)
			} else {
				res.Retracted = append(res.Retracted, f)
			}
		}
		if !theirs.IsZero() {
			memo.Remotes[o.Remote] = theirs.String()
		}
		memo.save(l.Store.CommonDir)
		head, err := l.Head()
		if err != nil {
			return res, err
		}
		res.Head = head
		if l.autoCheckpoint && o.Push && !head.IsZero() {
			// Its failure (no key, facts held back) is a warning: the
			// ledger's sync goes on.
			if _, err := l.WriteCheckpoint(); err != nil {
				l.warn("no checkpoint written (rally.checkpoint): %v", err)
			}
		}
		also := l.checkpointPushes(o.Remote, memo)
		if o.Push && !head.IsZero() && head == theirs && len(also) > 0 {
			// Only the checkpoint moved: its push may fail, the sync not.
			if err := refs.PushRefspecs(o.Dir, o.Remote, also); err != nil {
				memo.refuse(o.Remote, also)
				memo.save(l.Store.CommonDir)
			}
		}
		if !o.Push || head.IsZero() || head == theirs {
			return res, nil
		}
		// Push the commit, not the ref name: an append made meanwhile
		// goes with the next sync, and what we record is what we pushed.
		// This clone's checkpoints go in the same push; when the push
		// fails as a whole, the ledger is pushed again alone.
		pr, err := refs.PushAlso(o.Dir, o.Remote, head.String(), LedgerRef, also, o.Progress)
		if len(also) > 0 && (err != nil || pr.Status == refs.RemoteRejected) {
			memo.refuse(o.Remote, also)
			memo.save(l.Store.CommonDir)
			pr, err = refs.Push(o.Dir, o.Remote, head.String(), LedgerRef, o.Progress)
		}
		if (err != nil || pr.Status == refs.RemoteRejected) && !res.Healed && !l.whole(head) {
			// The cause is here: objects of this clone's history are
			// gone (a prune beside appends), so the push could not send
			// them. Write the facts back and push that.
			if _, herr := l.Heal(); herr != nil {
				return res, historyFailure(herr)
			}
			res.Healed = true
			continue
		}
		if again, lerr := lost("pushing the ledger to", err); lerr != nil {
			return res, lerr
		} else if again {
			continue
		}
		if err != nil {
			return res, fmt.Errorf("pushing the ledger to %s: %w", o.Remote, err)
		}
		dropped = 0
		switch pr.Status {
		case refs.Pushed, refs.UpToDate:
			res.Pushed, res.RemoteHead = true, head
			memo.Remotes[o.Remote] = head.String()
			memo.Pending = nil
			memo.save(l.Store.CommonDir)
			if err := l.Store.UpdateRef(track, head); err != nil {
				l.warn("%v", err)
			}
			return res, nil
		case refs.RemoteRejected:
			return res, &PushRefusedError{Remote: o.Remote, Summary: pr.Summary, Detail: pr.Detail}
		}
		now := o.Now()
		if stalled == 0 {
			moved = now
		}
		if stalled+1 >= o.Stalled || round >= o.MaxRounds || now.Sub(moved) >= o.Timeout {
			return res, gaveUp(o.Remote, round, stalled+1, now.Sub(start), pr)
		}
		// The remote moved on, or held a commit not in our history:
		// fetch again, and make sure the next merge has it as a parent.
		ensure = true
	}
}

func (r *SyncResult) note(mr MergeResult) {
	r.NewFacts += mr.NewFacts
	if rank(mr.Kind) > rank(r.Merge) {
		r.Merge = mr.Kind
	}
}

func rank(kind string) int {
	switch kind {
	case MergeFastForward:
		return 1
	case MergeCommit:
		return 2
	}
	return 0
}

// PushRefusedError is a push the remote refused for good (a hook, a rule,
// a host that does not accept custom refs). Detail is the error the
// remote printed with it, if any (remote text: shown sanitized).
type PushRefusedError struct{ Remote, Summary, Detail string }

func (e *PushRefusedError) Error() string {
	msg := fmt.Sprintf("%s refused refs/rally/ledger: %s", e.Remote, facts.Sanitize(e.Summary, 200))
	if e.Detail != "" {
		msg += ": " + facts.Sanitize(e.Detail, 400)
	}
	return msg
}

func uniqueHashes(hs ...refs.Hash) []refs.Hash {
	var out []refs.Hash
	for _, h := range hs {
		if h.IsZero() {
			continue
		}
		dup := false
		for _, o := range out {
			dup = dup || o == h
		}
		if !dup {
			out = append(out, h)
		}
	}
	return out
}

// defaultBackoff doubles from 20 ms up to 8 s, and waits a random time
// between half of that and all of it. Two or three clones racing settle
// in a few rounds of tens of milliseconds; fifty clones pushing to one
// remote at once spread out over seconds instead of all fetching and
// merging again each second, which kept most of them losing (with a 1 s
// cap, 60 of 150 syncs of fifty clones gave up: bench/README.md).
func defaultBackoff(round int) time.Duration {
	d := min(20*time.Millisecond<<min(round-2, 10), maxBackoff)
	return d/2 + rand.N(d/2)
}

// maxDropped bounds the fetches and pushes in a row whose connection broke
// (a server resetting connections under load): each is tried again after
// the round's pause, the third in a row ends the sync.
const maxDropped = 3

// maxBackoff is the longest pause between two rounds of a sync.
const maxBackoff = 8 * time.Second

// SyncGaveUpError is a sync whose pushes were rejected round after round
// until a bound was reached.
type SyncGaveUpError struct {
	Remote string
	Rounds int
	// Stalled counts the last rounds in a row whose pushes were rejected
	// against one and the same remote head: nobody was landing.
	Stalled int
	Elapsed time.Duration
	// Summary and Detail are git's words on the last push.
	Summary, Detail string
}

func (e *SyncGaveUpError) Error() string {
	why := "others kept landing there the whole time"
	if e.Stalled > 1 {
		why = fmt.Sprintf("the ledger there did not move in the last %d rounds, yet every push was rejected", e.Stalled)
	}
	msg := fmt.Sprintf("pushing the ledger to %s: gave up after %d rounds in %s: %s; git said: %s",
		e.Remote, e.Rounds, e.Elapsed.Round(100*time.Millisecond), why, facts.Sanitize(e.Summary, 200))
	if e.Detail != "" {
		msg += ": " + facts.Sanitize(e.Detail, 400)
	}
	return msg
}

// gaveUp is the error of a sync that stops retrying, with the advice.
func gaveUp(remote string, rounds, stalled int, elapsed time.Duration, pr refs.PushResult) error {
	e := &SyncGaveUpError{Remote: remote, Rounds: rounds, Stalled: stalled, Elapsed: elapsed, Summary: pr.Summary, Detail: pr.Detail}
	hint := "git rally sync " + remote
	if stalled > 1 {
		hint = "a lock left on " + remote + " (refs/rally/ledger.lock in its git dir) blocks every push; " +
			"remove it there once no git process runs, then: " + hint
	}
	return &facts.FailedError{Err: e, Hint: hint}
}

// syncMemo is machine-local (never synced), in <common>/rally/sync.json:
// the ledger head each remote had when this clone last synced with it (to
// notice history rewritten there, even after a plain git fetch moved the
// tracking ref), and the claim-contested risks written here that no push
// has published yet (to retract them if another clone published the same
// contest first).
type syncMemo struct {
	Remotes map[string]string `json:"remotes"`
	Pending []string          `json:"pending_risks,omitempty"`
	// Mine are the open claims made in this clone (contestowner.go).
	Mine []string `json:"own_claims,omitempty"`
	// Refused are the checkpoints (remote, ref -> commit) a push could not
	// deliver: not sent again with every sync until they change.
	Refused map[string]string `json:"refused_checkpoints,omitempty"`
}

func (m *syncMemo) refuse(remote string, specs []string) {
	if m.Refused == nil {
		m.Refused = map[string]string{}
	}
	for _, sp := range specs {
		if h, ref, ok := strings.Cut(strings.TrimPrefix(sp, "+"), ":"); ok {
			m.Refused[remote+" "+ref] = h
		}
	}
}

func syncMemoPath(commonDir string) string { return filepath.Join(commonDir, "rally", "sync.json") }

func loadSyncMemo(commonDir string) *syncMemo {
	m := &syncMemo{}
	if b, err := os.ReadFile(syncMemoPath(commonDir)); err == nil {
		json.Unmarshal(b, m)
	}
	if m.Remotes == nil {
		m.Remotes = map[string]string{}
	}
	return m
}

func (m *syncMemo) seen(remote string) refs.Hash {
	h, _ := refs.ParseHash(m.Remotes[remote])
	return h
}

// save writes the memo. A failure is ignored: the memo only sharpens the
// rewritten-history report and the duplicate-risk cleanup.
func (m *syncMemo) save(commonDir string) {
	b, _ := json.MarshalIndent(m, "", "  ")
	p := syncMemoPath(commonDir)
	if os.MkdirAll(filepath.Dir(p), 0o777) != nil {
		return
	}
	tmp := fmt.Sprintf("%s.%d.tmp", p, os.Getpid())
	if os.WriteFile(tmp, append(b, '\n'), 0o666) != nil || os.Rename(tmp, p) != nil {
		os.Remove(tmp)
	}
}

// checkpointPushes lists the refspecs that push this clone's signed
// checkpoints (refs/rally/checkpoints/*: only their writer writes them
// there, so forced) that the remote did not hold at the last fetch and
// did not refuse before.
func (l *Ledger) checkpointPushes(remote string, memo *syncMemo) []string {
	var out []string
	mine := l.Store.RefsMatching(CheckpointRefPrefix + "*")
	names := make([]string, 0, len(mine))
	for n := range mine {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		theirs, _ := l.Store.ReadRef(TrackingPrefix + remote + "/checkpoints/" + strings.TrimPrefix(n, CheckpointRefPrefix))
		if theirs != mine[n] && memo.Refused[remote+" "+n] != mine[n].String() {
			out = append(out, "+"+mine[n].String()+":"+n)
		}
	}
	return out
}
