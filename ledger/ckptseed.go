package ledger

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// ckptCandidate is a checkpoint whose signature, message and trust held.
type ckptCandidate struct {
	ref    string
	commit refs.SignedCommit
	msg    ckptMessage
	when   time.Time // C's commit time: the newest is tried first
}

// trustedCheckpoints lists the checkpoints this reader may believe, the
// newest ledger commit first. Ancestry is checked by the caller.
func (l *Ledger) trustedCheckpoints() []ckptCandidate {
	if len(l.ckptSigners) == 0 || refs.SSH == nil {
		return nil
	}
	var keys []refs.PublicKey
	var principals []string
	for _, s := range l.ckptSigners {
		if k, err := refs.SSH.ParseKey([]byte(s)); err == nil {
			keys = append(keys, k)
		} else if s = strings.TrimSpace(s); s != "" {
			principals = append(principals, s)
		}
	}
	var allowed refs.AllowedSigners
	if len(principals) > 0 {
		allowed = l.allowedSigners()
	}
	found := l.Store.RefsMatching(CheckpointRefPrefix + "*")
	for n, h := range l.Store.RefsMatching(TrackingPrefix + "*/checkpoints/*") {
		found[n] = h
	}
	var out []ckptCandidate
	want := ckptSettings(l.Signing.Require)
	for name, h := range found {
		sc, err := l.Store.ReadSignedCommit(h)
		if err != nil || len(sc.Parents) != 0 || sc.Signature == "" {
			continue
		}
		m, ok := parseCkptMessage(sc.Message)
		if !ok || m.format != ckptFormat() || m.settings != want {
			continue
		}
		k, ok := refs.SSH.Check([]byte(sc.Signature), sc.Payload)
		if !ok || !trustsKey(k, keys, principals, allowed, sc.When) {
			continue
		}
		c, err := l.Store.ReadCommit(m.ledger)
		if err != nil {
			continue
		}
		out = append(out, ckptCandidate{ref: name, commit: sc, msg: m, when: c.When})
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].when.Equal(out[j].when) {
			return out[i].when.After(out[j].when)
		}
		return out[i].ref < out[j].ref
	})
	return out
}

func trustsKey(k refs.PublicKey, keys []refs.PublicKey, principals []string, allowed refs.AllowedSigners, at time.Time) bool {
	for _, t := range keys {
		if bytes.Equal(t.Marshal(), k.Marshal()) {
			return true
		}
	}
	if allowed == nil {
		return false
	}
	for _, p := range principals {
		if allowed.Allows(p, k, "git", at) {
			return true
		}
	}
	return false
}

// isAncestor reports whether commit a is b or an ancestor of b. The
// commits nearest b are walked in-process (a checkpoint is usually a few
// appends behind the head; a git process costs more than the whole seeded
// read); past ancestorWalk of them git decides.
func (l *Ledger) isAncestor(a, b refs.Hash) bool {
	seen := map[refs.Hash]bool{b: true}
	queue := []refs.Hash{b}
	for len(queue) > 0 && len(seen) <= ancestorWalk {
		h := queue[0]
		queue = queue[1:]
		if h == a {
			return true
		}
		c, err := l.Store.ReadCommit(h)
		if err != nil {
			break
		}
		for _, p := range c.Parents {
			if !seen[p] {
				seen[p] = true
				queue = append(queue, p)
			}
		}
	}
	if len(queue) == 0 && len(seen) <= ancestorWalk {
		return false // the whole history was walked
	}
	_, err := refs.Git(l.Store.CommonDir, nil, "merge-base", "--is-ancestor", a.String(), b.String())
	return err == nil
}

// ancestorWalk is how many commits isAncestor reads in-process.
var ancestorWalk = 256

// ckptState reads and decodes a checkpoint's projection; false when its
// tree is not exactly a checkpoint's.
func (l *Ledger) ckptState(tree refs.Hash) (*facts.State, bool) {
	es, err := l.Store.ReadTree(tree)
	if err != nil || len(es) != 2 || es[0].Name != "format" || es[0].Dir || es[1].Name != "state" || !es[1].Dir {
		return nil, false
	}
	if b, err := l.Store.ReadBlob(es[0].Hash); err != nil || string(b) != ckptFormatContent {
		return nil, false
	}
	cs, err := l.Store.ReadTree(es[1].Hash)
	if err != nil || len(cs) == 0 {
		return nil, false
	}
	var payload []byte
	for i, c := range cs {
		if c.Dir || c.Name != fmt.Sprintf("%04d", i) {
			return nil, false
		}
		b, err := l.Store.ReadBlob(c.Hash)
		if err != nil || (i < len(cs)-1 && len(b) != ckptChunk) {
			return nil, false
		}
		payload = append(payload, b...)
	}
	return decodeCkptState(payload)
}

// CheckpointSeeds counts the reads that started from a signed checkpoint
// (tests).
var CheckpointSeeds int

// seedFromCheckpoint computes the projection at head from the newest
// trusted checkpoint at an ancestor of head and the facts added since,
// each through the one blob parser and its checks, applied as a catch-up
// applies them. It reports false (and leaves no warning) when no
// checkpoint can be used or the facts since cannot be applied in place;
// the caller then computes the projection from every fact.
func (l *Ledger) seedFromCheckpoint(head refs.Hash) (*facts.State, bool) {
	if len(l.ckptSigners) == 0 || l.Signing.Require || head.IsZero() {
		return nil, false
	}
	cands := l.trustedCheckpoints()
	if len(cands) == 0 {
		return nil, false
	}
	hz := l.horizon()
	hc, err := l.Store.ReadCommit(head)
	if err != nil {
		return nil, false
	}
	for _, cd := range cands {
		if cd.msg.latest > hz.UnixNano() || !l.isAncestor(cd.msg.ledger, head) {
			continue
		}
		st, ok := l.ckptState(cd.commit.Tree)
		if !ok {
			continue
		}
		c, err := l.Store.ReadCommit(cd.msg.ledger)
		if err != nil || st.Head != cd.msg.ledger.String() || st.Tree != c.Tree.String() {
			continue
		}
		nw := len(l.Warnings)
		added, err := l.diffUpTo(c.Tree, hc.Tree, bigCatchUp)
		if err != nil {
			continue
		}
		fs := l.parseBlobs(added)
		st.SetHorizon(hz)
		if err := st.Apply(fs); err != nil {
			l.Warnings = l.Warnings[:nw]
			continue
		}
		st.Head, st.Tree = head.String(), hc.Tree.String()
		CheckpointSeeds++
		return st, true
	}
	return nil, false
}

// farBehind reports whether bringing the cached projection st to head
// would rebuild it from every fact: more than bigCatchUp new facts (a
// fresh clone's first read after init --remote fetched a ledger on top
// of its own empty one), or facts lost.
func (l *Ledger) farBehind(st *facts.State, head refs.Hash) bool {
	old, err := refs.ParseHash(st.Tree)
	if err != nil {
		return true
	}
	c, err := l.Store.ReadCommit(head)
	if err != nil {
		return false
	}
	_, err = l.diffUpTo(old, c.Tree, bigCatchUp)
	return err != nil
}
