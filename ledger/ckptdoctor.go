package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// doctorCheckpoints reports the checkpoints a read of this clone would
// believe (rally.checkpointSigner's, signature good, this version's)
// whose projection is not the one computed here from the facts of their
// ledger commit. Others are never used, and are not checked: each check
// of a commit other than the head is a cold read of it (110 MB at a
// million facts; doctor itself holds 37); one of the head is compared
// with the projection this clone computed.
func (l *Ledger) doctorCheckpoints() []Problem {
	var ps []Problem
	computed := map[refs.Hash][]byte{}
	for _, cd := range l.trustedCheckpoints() {
		name := facts.Sanitize(cd.ref, 200)
		bad := func(why string) {
			ps = append(ps, Problem{Code: "checkpoint", Path: name, Message: fmt.Sprintf("checkpoint %s: %s", name, why)})
		}
		st, ok := l.ckptState(cd.commit.Tree)
		if !ok {
			bad("its projection does not decode")
			continue
		}
		want, done := computed[cd.msg.ledger]
		if !done {
			var cst *facts.State
			head, err := l.Head()
			if err == nil && head == cd.msg.ledger {
				cst, err = l.readMirror()
				if err == nil && cst.Held > 0 {
					cst, err = nil, errHeld
				}
			}
			if cst == nil || err != nil {
				c, cerr := l.Store.ReadCommit(cd.msg.ledger)
				if cerr != nil {
					continue
				}
				if cst, err = l.stateAt(c.Tree); err == nil {
					cst.Head, cst.Tree = cd.msg.ledger.String(), c.Tree.String()
				}
			}
			if err != nil {
				bad("the facts of its ledger commit cannot be read: " + facts.Sanitize(err.Error(), 300))
				continue
			}
			want = encodeCkptState(cst)
			computed[cd.msg.ledger] = want
		}
		if !bytes.Equal(encodeCkptState(st), want) {
			bad(fmt.Sprintf("its projection of ledger commit %s is not the one computed from that commit's facts, and reads with no cache believe it (its signer is in rally.checkpointSigner): stop trusting the signer, or have it write the checkpoint again", cd.msg.ledger))
		}
	}
	return ps
}

// errHeld: the projection holds facts back, a checkpoint none.
var errHeld = errors.New("facts held back")

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
