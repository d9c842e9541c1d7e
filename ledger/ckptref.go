package ledger

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

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
	var e encoder
	encodeFlatState(&e, st)
	return e.b
}

// encodeFlatState appends st as both checkpoints hold it (the cache's
// state.bin and the checkpoint ref): its claims all in Added, none in a
// base or a claims file, then its handoffs.
func encodeFlatState(e *encoder, st *facts.State) {
	cp := *st
	all := st.Claims.All()
	added := make(map[string]*facts.Fact, len(all))
	for _, f := range all {
		added[f.ID] = f
	}
	cp.Claims = facts.ClaimSet{Added: added}
	e.b = slices.Grow(e.b, 4096+256*len(all))
	encodeState(e, &cp, &cacheFile{})
	e.str(string(encodeHandoffs(st)))
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
