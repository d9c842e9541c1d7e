package ledger

import (
	"bytes"
	"fmt"
	"sort"
	"time"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// doctorCheckpoints reports the checkpoints (this clone's and fetched
// ones, trusted or not) whose projection is not the one computed here
// from the facts of their ledger commit. A checkpoint of another format,
// or of a commit this clone does not have, is not checked.
func (l *Ledger) doctorCheckpoints() []Problem {
	found := l.Store.RefsMatching(CheckpointRefPrefix + "*")
	for n, h := range l.Store.RefsMatching(TrackingPrefix + "*/checkpoints/*") {
		found[n] = h
	}
	names := make([]string, 0, len(found))
	for n := range found {
		names = append(names, n)
	}
	sort.Strings(names)
	var ps []Problem
	computed := map[refs.Hash][]byte{}
	for _, name := range names {
		bad := func(why string) {
			ps = append(ps, Problem{Code: "checkpoint", Path: facts.Sanitize(name, 200),
				Message: fmt.Sprintf("checkpoint %s: %s", facts.Sanitize(name, 200), why)})
		}
		sc, err := l.Store.ReadSignedCommit(found[name])
		if err != nil {
			bad("its commit cannot be read: " + facts.Sanitize(err.Error(), 300))
			continue
		}
		m, ok := parseCkptMessage(sc.Message)
		if !ok {
			bad("not a checkpoint commit (its message does not name a ledger commit)")
			continue
		}
		if m.format != ckptFormat() {
			continue
		}
		c, err := l.Store.ReadCommit(m.ledger)
		if err != nil {
			continue
		}
		st, ok := l.ckptState(sc.Tree)
		if !ok {
			bad("its projection does not decode")
			continue
		}
		want, done := computed[m.ledger]
		if !done {
			cst, err := l.stateAt(c.Tree)
			if err != nil {
				bad("the facts of its ledger commit cannot be read: " + facts.Sanitize(err.Error(), 300))
				continue
			}
			cst.Head, cst.Tree = m.ledger.String(), c.Tree.String()
			want = encodeCkptState(cst)
			computed[m.ledger] = want
		}
		if !bytes.Equal(encodeCkptState(st), want) {
			bad(fmt.Sprintf("its projection of ledger commit %s is not the one computed from that commit's facts (a reader that trusts its signer believes it; write it again with git rally checkpoint, or stop trusting its signer)", m.ledger))
		}
	}
	return ps
}

// stateAt computes the projection of the facts under a ledger tree, with
// nothing held back, as a cold read does, and saves nothing.
func (l *Ledger) stateAt(tree refs.Hash) (*facts.State, error) {
	nw := len(l.Warnings)
	defer func() { l.Warnings = l.Warnings[:nw] }()
	defer lowGC()()
	ls, err := l.readStore(tree, nil)
	if err != nil {
		return nil, err
	}
	if !ls.odd {
		st, err := ls.project(time.Time{}, func([]byte, *facts.Fact) {})
		ls.release()
		if err == nil {
			return st, nil
		}
	} else {
		ls.release()
	}
	all, err := l.readAll(tree)
	if err != nil {
		return nil, err
	}
	return facts.BuildAt(dedupe(all), time.Time{}), nil
}
