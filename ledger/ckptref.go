package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// A signed checkpoint is the time-independent projection (facts.State) at
// a ledger commit C, stored in git so that a clone with no cache can start
// from it instead of reading every fact:
//
//	refs/rally/checkpoints/<name>   a parentless commit, signed with its
//	                                writer's user.signingKey (SSHSIG in
//	                                gpgsig); <name> is the first 16 hex
//	                                digits of the SHA-256 of the key
//	tree: format                    "git-rally checkpoint 1"
//	      state/0000, 0001, ...     the projection's encoding in chunks of
//	                                512 KiB (the read-side cap is 1 MiB)
//	message: rally checkpoint / ledger <C> / settings <fp> /
//	         format <version> / latest <unix ns of the latest fact time>
//
// The encoding is state.bin's (every claim in it, then the handoffs):
// maps in key order, so two writers at the same C write the same bytes.
// A reader believes one only when rally.checkpointSigner names its signer
// (a principal of the allowed-signers file, or a public key), its
// signature verifies, its format and settings are the reader's, C is the
// ledger head or an ancestor of it, and nothing in it would be held back
// by the reader's clock; anything else is ignored and the projection is
// computed. What a trusted signer signs is believed: that is what trusting
// a signer means.
const (
	CheckpointRefPrefix = "refs/rally/checkpoints/"
	ckptFormatContent   = "git-rally checkpoint 1\n"
	ckptVersion         = 1
	ckptChunk           = 512 << 10
)

// ckptFormat names the encoding and the projection's rules: a checkpoint
// written by a version whose projection differs is not used.
func ckptFormat() string { return fmt.Sprintf("%d.%d", ckptVersion, cacheVersion) }

// ckptSettings is the fingerprint of what the projection was computed
// under: every fact (not only verified ones, rally.requireSigned) and
// the future skew that holds facts back.
func ckptSettings(verifiedOnly bool) string {
	which := "all"
	if verifiedOnly {
		which = "verified"
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "facts=%s\nfuture-skew=%s\nformat=%s\n", which, facts.FutureSkew, ckptFormat()))
	return hex.EncodeToString(sum[:8])
}

// encodeCkptState is the checkpoint's encoding of st: deterministic for a
// projection (every map in key order, the claims all in the state).
func encodeCkptState(st *facts.State) []byte {
	cp := *st
	all := st.Claims.All()
	added := make(map[string]*facts.Fact, len(all))
	for _, f := range all {
		added[f.ID] = f
	}
	cp.Claims = facts.ClaimSet{Added: added}
	e := encoder{b: make([]byte, 0, 4096+256*len(all))}
	encodeState(&e, &cp, &cacheFile{})
	e.str(string(encodeHandoffs(st)))
	return e.b
}

// decodeCkptState is the inverse of encodeCkptState; false when the bytes
// do not decode to a projection with nothing held back.
func decodeCkptState(b []byte) (st *facts.State, ok bool) {
	defer func() {
		if recover() != nil {
			st, ok = nil, false
		}
	}()
	d := &decoder{b: b}
	st, cf := decodeState(d)
	hb := d.bytes()
	if d.bad || len(d.b) != 0 || cf.ClaimsFile != "" || cf.HandoffsFile != "" || cf.Gen != 0 || cf.MirrorLen != 0 ||
		len(st.Claims.Gone) > 0 || st.Held != 0 || st.HeldFirst != 0 {
		return nil, false
	}
	hb = append([]byte{}, hb...)
	if _, err := decodeHandoffs(hb); err != nil {
		return nil, false
	}
	st.SetPendingHandoffs(&facts.PendingHandoffs{Enc: hb, Decode: decodeHandoffs})
	st.Init()
	return st, true
}

// ckptMessage is a checkpoint commit's message.
type ckptMessage struct {
	ledger   refs.Hash
	settings string
	format   string
	latest   int64
}

func (m ckptMessage) String() string {
	return fmt.Sprintf("rally checkpoint\n\nledger %s\nsettings %s\nformat %s\nlatest %d\n", m.ledger, m.settings, m.format, m.latest)
}

// parseCkptMessage reads a checkpoint's message, strictly.
func parseCkptMessage(s string) (ckptMessage, bool) {
	var m ckptMessage
	lines := strings.Split(s, "\n")
	if len(lines) != 7 || lines[0] != "rally checkpoint" || lines[1] != "" || lines[6] != "" {
		return m, false
	}
	want := []string{"ledger ", "settings ", "format ", "latest "}
	vals := make([]string, 4)
	for i, p := range want {
		v, ok := strings.CutPrefix(lines[2+i], p)
		if !ok || v == "" {
			return m, false
		}
		vals[i] = v
	}
	h, err := refs.ParseHash(vals[0])
	if err != nil || h.String() != vals[0] {
		return m, false
	}
	n, err := strconv.ParseInt(vals[3], 10, 64)
	if err != nil {
		return m, false
	}
	return ckptMessage{ledger: h, settings: vals[1], format: vals[2], latest: n}, true
}

// CheckpointName is the ref name a key's checkpoints live under.
func CheckpointName(k refs.PublicKey) string {
	sum := sha256.Sum256(k.Marshal())
	return hex.EncodeToString(sum[:8])
}

// CheckpointResult is what WriteCheckpoint did.
type CheckpointResult struct {
	Ref       string
	Commit    refs.Hash
	Ledger    refs.Hash
	Facts     int
	Bytes     int
	Unchanged bool // the ref already held a checkpoint of that head
}

// WriteCheckpoint writes a signed checkpoint of the ledger head, computed
// here from the facts (never from another checkpoint), signed with
// user.signingKey.
func (l *Ledger) WriteCheckpoint() (CheckpointResult, error) {
	var res CheckpointResult
	if refs.SSH == nil {
		return res, refs.ErrNoSSH
	}
	if l.signingKey == "" {
		return res, &facts.RefusedError{Code: "no-signing-key", Msg: "a checkpoint is signed, and user.signingKey is not set",
			Hint: "git config user.signingKey ~/.ssh/id_ed25519.pub"}
	}
	signer := NewSigner(l.signingKey, os.Getenv("SSH_AUTH_SOCK"))
	if err := signer.Ready(); err != nil {
		return res, err
	}
	kh, ok := signer.(refs.KeyHolder)
	if !ok {
		return res, fmt.Errorf("internal: the signer does not name its key")
	}
	key, err := kh.Public()
	if err != nil {
		return res, err
	}
	st, err := l.readMirror()
	if err != nil {
		return res, err
	}
	if st.Head == "" {
		return res, &facts.RefusedError{Code: "no-ledger", Msg: "the ledger has no facts: nothing to checkpoint"}
	}
	if st.Held > 0 {
		return res, &facts.RefusedError{Code: "held-facts",
			Msg:  fmt.Sprintf("%d facts are dated in the future and held back: a checkpoint holds none; write it when they are due", st.Held),
			Hint: "git rally doctor"}
	}
	if st.Damaged {
		return res, fmt.Errorf("the projection did not decode: run git rally doctor")
	}
	head, err := refs.ParseHash(st.Head)
	if err != nil {
		return res, err
	}
	res.Ref, res.Ledger, res.Facts = CheckpointRefPrefix+CheckpointName(key), head, st.Facts
	if old, err := l.Store.ReadRef(res.Ref); err == nil && !old.IsZero() {
		// Already there: not read again (sync with rally.checkpoint
		// asks at every push).
		if c, err := l.Store.ReadCommit(old); err == nil {
			if m, ok := parseCkptMessage(c.Message); ok && m.ledger == head && m.format == ckptFormat() && m.settings == ckptSettings(false) {
				res.Commit, res.Unchanged = old, true
				return res, nil
			}
		}
	}
	var latest int64
	if err := l.Each("", "", func(f *facts.Fact) error {
		if t := f.Time(); !t.IsZero() && t.UnixNano() > latest {
			latest = t.UnixNano()
		}
		return nil
	}); err != nil {
		return res, err
	}
	msg := ckptMessage{ledger: head, settings: ckptSettings(false), format: ckptFormat(), latest: latest}
	payload := encodeCkptState(st)
	res.Bytes = len(payload)
	c, err := l.writeCkptCommit(payload, msg.String(), signer)
	if err != nil {
		return res, err
	}
	if err := l.Store.Ensure(); err != nil {
		return res, err
	}
	if err := l.Store.UpdateRef(res.Ref, c); err != nil {
		return res, err
	}
	res.Commit = c
	return res, nil
}

// writeCkptCommit writes a checkpoint commit of payload with message msg,
// signed by signer (nil: unsigned; tests forge those).
func (l *Ledger) writeCkptCommit(payload []byte, msg string, signer refs.Signer) (refs.Hash, error) {
	fb, err := l.Store.WriteBlob([]byte(ckptFormatContent))
	if err != nil {
		return refs.ZeroHash, err
	}
	var chunks []refs.Entry
	for i := 0; i == 0 || i*ckptChunk < len(payload); i++ {
		h, err := l.Store.WriteBlob(payload[i*ckptChunk : min(len(payload), (i+1)*ckptChunk)])
		if err != nil {
			return refs.ZeroHash, err
		}
		chunks = append(chunks, refs.Entry{Name: fmt.Sprintf("%04d", i), Hash: h})
	}
	sh, err := l.Store.WriteTree(chunks)
	if err != nil {
		return refs.ZeroHash, err
	}
	root, err := l.Store.WriteTree([]refs.Entry{{Name: "format", Hash: fb}, {Name: "state", Dir: true, Hash: sh}})
	if err != nil {
		return refs.ZeroHash, err
	}
	return l.Store.WriteCommitWith(refs.Commit{Tree: root, Message: msg, When: l.Now()}, signer)
}

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
