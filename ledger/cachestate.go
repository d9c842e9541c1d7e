package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/git-rally/git-rally/facts"
)

// compactAt is how many changes (claims opened or closed) state.bin
// carries on top of the claims file before a new claims file is written;
// fewer open claims than that live in state.bin alone. An append decodes
// at most this many claims it did not ask for, whatever the room's size,
// and writes a claims file once per compactAt changes.
var compactAt = 32

// encodeState writes the projection for state.bin: everything but the
// handoffs (their own file) and the claims of the claims file, which
// state.bin names with the changes since.
func encodeState(e *encoder, st *facts.State, cf *cacheFile) {
	e.str(st.Head)
	e.str(st.Tree)
	e.key(st.Last)
	e.int(st.MaxClock)
	e.str(st.Newest)
	e.int(int64(st.Facts))
	e.int(int64(st.Retracted))
	e.int(int64(st.Bad))
	encodeMap(e, st.ByKind, encInt)
	e.int(int64(st.Held))
	e.int(st.HeldFirst)
	encodeMap(e, st.Peers, encPeer)
	encodeFacts(e, st.Blockers)
	encodeFacts(e, st.Risks)
	encodeFacts(e, st.Sessions)
	encodeMap(e, st.Artifacts, encArtifact)
	encodeMap(e, st.Retraction, encStr)
	encodeMap(e, st.Contest, encStr)
	encodeMap(e, st.Plans, encPlan)
	e.fact(st.Lead)

	e.int(int64(cf.Gen))
	e.int(cf.MirrorLen)
	e.uint(uint64(cf.MirrorSum))
	e.str(cf.HandoffsFile)
	e.str(cf.ClaimsFile)
	e.uint(uint64(cf.ClaimsSum))
	cs := &st.Claims
	gone := make([]int, 0, len(cs.Gone))
	for i := range cs.Gone {
		gone = append(gone, int(i))
	}
	sort.Ints(gone)
	e.uint(uint64(len(gone)))
	for _, i := range gone {
		e.uint(uint64(i))
	}
	encodeFacts(e, cs.Added)
}

// decodeState is the inverse of encodeState. The claims file is attached
// by the caller.
func decodeState(d *decoder) (*facts.State, *cacheFile) {
	st := &facts.State{Head: d.str(), Tree: d.str(), Last: d.key(), MaxClock: d.int(), Newest: d.str()}
	st.Facts, st.Retracted, st.Bad = int(d.int()), int(d.int()), int(d.int())
	st.ByKind = decodeMap(d, decInt)
	st.Held, st.HeldFirst = int(d.int()), d.int()
	st.Peers = decodeMap(d, decPeer)
	st.Blockers, st.Risks, st.Sessions = decodeFacts(d), decodeFacts(d), decodeFacts(d)
	st.Artifacts = decodeMap(d, decArtifact)
	st.Retraction, st.Contest = decodeMap(d, decStr), decodeMap(d, decStr)
	st.Plans = decodeMap(d, decPlan)
	st.Lead = d.fact()

	cf := &cacheFile{Gen: int(d.int()), MirrorLen: d.int(), MirrorSum: uint32(d.uint())}
	cf.HandoffsFile, cf.ClaimsFile, cf.ClaimsSum = d.str(), d.str(), uint32(d.uint())
	n := d.count(1)
	if n > 0 {
		st.Claims.Gone = make(map[uint32]bool, n)
	}
	for i := 0; i < n && !d.bad; i++ {
		st.Claims.Gone[uint32(d.uint())] = true
	}
	if added := decodeFacts(d); len(added) > 0 {
		st.Claims.Added = added
	}
	for id, f := range st.Claims.Added {
		if f == nil || f.ID != id {
			d.fail()
		}
	}
	return st, cf
}

// contentName names a cache file by its payload, so a state names exactly
// the claims or handoffs it was saved with.
func contentName(prefix string, payload []byte) string {
	sum := sha256.Sum256(payload)
	return prefix + hex.EncodeToString(sum[:10]) + ".bin"
}

// writeNamed writes a sealed file under its content name, then removes the
// other files of that prefix but keep. A file of that name is kept only
// when it holds exactly these bytes: it may be the damaged copy that sent
// a reader to rebuild. A replacement has the same content, so a reader
// holding the old one reads the same claims or handoffs.
func (c *cache) writeNamed(prefix, kind string, payload []byte, keep string) (string, error) {
	name := contentName(prefix, payload)
	p := filepath.Join(c.dir, name)
	sealed := seal(payload, kind, "")
	if old, err := os.ReadFile(p); err != nil || !bytes.Equal(old, sealed) {
		tmp := fmt.Sprintf("%s.%d.tmp", p, os.Getpid())
		if err := os.WriteFile(tmp, sealed, 0o666); err != nil {
			return "", err
		}
		if err := os.Rename(tmp, p); err != nil {
			os.Remove(tmp)
			return "", err
		}
	}
	// Files older than the one the previous state named go: a reader may
	// hold that state still.
	if ents, err := os.ReadDir(c.dir); err == nil {
		for _, e := range ents {
			n := e.Name()
			if strings.HasPrefix(n, prefix) && strings.HasSuffix(n, ".bin") && n != name && n != keep {
				os.Remove(filepath.Join(c.dir, n))
			}
		}
	}
	return name, nil
}

// saveClaims writes a new claims file when st's claims carry more than
// compactAt changes on top of theirs, and re-points st's claims at it
// (the facts stay the same pointers). It returns the claims file's name
// and checksum ("": none, every claim is in state.bin).
func (c *cache) saveClaims(st *facts.State) (string, uint32, error) {
	cs := &st.Claims
	if cs.Delta() <= compactAt {
		cb := claimsFile(cs)
		if cb == nil {
			return "", 0, nil
		}
		return cb.name, cb.sum, nil
	}
	all := cs.All()
	if len(all) <= compactAt {
		added := make(map[string]*facts.Fact, len(all))
		for _, f := range all {
			added[f.ID] = f
		}
		st.Claims = facts.ClaimSet{Added: added}
		return "", 0, nil
	}
	payload := encodeClaimBase(all)
	keep := ""
	if c.saved != nil {
		keep = c.saved.ClaimsFile
	}
	name, err := c.writeNamed("claims-", "claims", payload, keep)
	if err != nil {
		return "", 0, err
	}
	nb, ok := openClaimBase(payload)
	if !ok {
		return "", 0, fmt.Errorf("internal: claims file does not open")
	}
	nb.name, nb.sum = name, crcOf(payload)
	nb.memo = all // encodeClaimBase sorted all as the records are
	st.Claims = facts.ClaimSet{Base: nb}
	return name, nb.sum, nil
}
