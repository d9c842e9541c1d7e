package ledger

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/git-rally/git-rally/facts"
)

// The cache's own binary encoding: unsigned and signed varints, strings
// as a length and their bytes, collections as a count and their items,
// maps in key order (so equal projections encode to equal bytes). It is
// private to this version of rally (every cache file names its version),
// so it needs no schema; it replaces encoding/gob, whose package set-up
// alone cost every process about 0.2 ms.
//
// Decoding never panics: a read past the end or a count larger than the
// bytes left marks the decoder bad and returns zero values, and the file
// is not believed.

type encoder struct{ b []byte }

func (e *encoder) uint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) int(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) str(s string)  { e.uint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *encoder) bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}

func (e *encoder) strs(ss []string) {
	e.uint(uint64(len(ss)))
	for _, s := range ss {
		e.str(s)
	}
}

type decoder struct {
	b   []byte
	bad bool
	// src, when set, holds the same bytes as b did at the start: strings
	// are cut from it instead of each allocated on its own.
	src string
	// arena, when it has room, is where string lists are cut from.
	arena []string
}

func (d *decoder) uint() uint64 {
	if b := d.b; len(b) > 0 && b[0] < 0x80 { // tags and most lengths: one byte
		d.b = b[1:]
		return uint64(b[0])
	}
	return d.uintLong()
}

func (d *decoder) uintLong() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) int() int64 {
	if b := d.b; len(b) > 0 && b[0] < 0x80 { // binary.Varint of one byte
		d.b = b[1:]
		return int64(b[0]>>1) ^ -int64(b[0]&1)
	}
	return d.intLong()
}

func (d *decoder) intLong() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) fail() { d.bad, d.b = true, nil }

// count reads a collection's length; each item takes at least min bytes.
func (d *decoder) count(min int) int {
	n := d.uint()
	if n > uint64(len(d.b)/max(min, 1)) {
		d.fail()
		return 0
	}
	return int(n)
}

func (d *decoder) bytes() []byte {
	n := d.uint()
	if n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	out := d.b[:n:n]
	d.b = d.b[n:]
	return out
}

func (d *decoder) str() string {
	if d.src == "" {
		return string(d.bytes())
	}
	var n uint64
	if b := d.b; len(b) > 0 && b[0] < 0x80 { // d.uint, inline
		n, d.b = uint64(b[0]), b[1:]
	} else {
		n = d.uint()
	}
	if n > uint64(len(d.b)) {
		d.fail()
		return ""
	}
	start := len(d.src) - len(d.b)
	d.b = d.b[n:]
	return d.src[start : start+int(n)]
}

func (d *decoder) bool() bool {
	if len(d.b) == 0 {
		d.fail()
		return false
	}
	v := d.b[0]
	d.b = d.b[1:]
	if v > 1 {
		d.fail()
	}
	return v == 1
}

func (d *decoder) strs() []string {
	n := d.count(1)
	if n == 0 {
		return nil
	}
	var out []string
	if l := len(d.arena); cap(d.arena)-l >= n {
		out, d.arena = d.arena[l:l+n:l+n], d.arena[:l+n]
	} else {
		out = make([]string, n)
	}
	for i := range out {
		out[i] = d.str()
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func encodeMap[V any](e *encoder, m map[string]V, item func(*encoder, V)) {
	e.uint(uint64(len(m)))
	for _, k := range sortedKeys(m) {
		e.str(k)
		item(e, m[k])
	}
}

func decodeMap[V any](d *decoder, item func(*decoder) V) map[string]V {
	n := d.count(2)
	m := make(map[string]V, n)
	for i := 0; i < n && !d.bad; i++ {
		k := d.str()
		m[k] = item(d)
	}
	return m
}

func encStr(e *encoder, s string) { e.str(s) }
func decStr(d *decoder) string    { return d.str() }
func encInt(e *encoder, v int)    { e.int(int64(v)) }
func decInt(d *decoder) int       { return int(d.int()) }

// Fact fields are written as a tag and a value, zero values left out, and
// a 0 tag ends the fact: most facts use a few of their thirty fields.
// Raw is never written (the mirror has the lines). A new Fact field needs
// a tag here; TestFactCodecCoversEveryField fails until it has one.
const (
	ftEnd = iota
	ftV
	ftID
	ftKind
	ftTool
	ftSession
	ftAt
	ftClock
	ftRef
	ftTarget
	ftScopes
	ftAccess
	ftLeaseS
	ftSubject
	ftBody
	ftFiles
	ftRevision
	ftEvidence
	ftURI
	ftAckBy
	ftReason
	ftSeverity
	ftStatus
	ftName
	ftPath
	ftBranch
	ftBase
	ftAgent
	ftBackend
	ftWorktree
	ftCommand
	ftCount
)

func (e *encoder) fact(f *facts.Fact) {
	if f == nil {
		e.bool(false)
		return
	}
	e.bool(true)
	num := func(tag int, v int64) {
		if v != 0 {
			e.uint(uint64(tag))
			e.int(v)
		}
	}
	str := func(tag int, s string) {
		if s != "" {
			e.uint(uint64(tag))
			e.str(s)
		}
	}
	list := func(tag int, ss []string) {
		if len(ss) > 0 {
			e.uint(uint64(tag))
			e.strs(ss)
		}
	}
	num(ftV, int64(f.V))
	str(ftID, f.ID)
	str(ftKind, f.Kind)
	str(ftTool, f.Tool)
	str(ftSession, f.Session)
	str(ftAt, f.At)
	num(ftClock, f.Clock)
	str(ftRef, f.Ref)
	str(ftTarget, f.Target)
	list(ftScopes, f.Scopes)
	str(ftAccess, f.Access)
	num(ftLeaseS, f.LeaseS)
	str(ftSubject, f.Subject)
	str(ftBody, f.Body)
	list(ftFiles, f.Files)
	str(ftRevision, f.Revision)
	list(ftEvidence, f.Evidence)
	str(ftURI, f.URI)
	str(ftAckBy, f.AckBy)
	str(ftReason, f.Reason)
	str(ftSeverity, f.Severity)
	str(ftStatus, f.Status)
	str(ftName, f.Name)
	str(ftPath, f.Path)
	str(ftBranch, f.Branch)
	str(ftBase, f.Base)
	str(ftAgent, f.Agent)
	str(ftBackend, f.Backend)
	str(ftWorktree, f.Worktree)
	list(ftCommand, f.Command)
	e.uint(ftEnd)
}

func (d *decoder) fact() *facts.Fact {
	if !d.bool() {
		return nil
	}
	f := &facts.Fact{}
	if !d.factInto(f) {
		return nil
	}
	return f
}

// factInto decodes the fields of a present fact into f.
func (d *decoder) factInto(f *facts.Fact) bool {
	for !d.bad {
		var tag uint64
		if b := d.b; len(b) > 0 && b[0] < 0x80 { // d.uint, inline
			tag, d.b = uint64(b[0]), b[1:]
		} else {
			tag = d.uint()
		}
		if tag == ftEnd || d.bad {
			break
		}
		switch tag {
		case ftV:
			f.V = int(d.int())
		case ftID:
			f.ID = d.str()
		case ftKind:
			f.Kind = d.str()
		case ftTool:
			f.Tool = d.str()
		case ftSession:
			f.Session = d.str()
		case ftAt:
			f.At = d.str()
		case ftClock:
			f.Clock = d.int()
		case ftRef:
			f.Ref = d.str()
		case ftTarget:
			f.Target = d.str()
		case ftScopes:
			f.Scopes = d.strs()
		case ftAccess:
			f.Access = d.str()
		case ftLeaseS:
			f.LeaseS = d.int()
		case ftSubject:
			f.Subject = d.str()
		case ftBody:
			f.Body = d.str()
		case ftFiles:
			f.Files = d.strs()
		case ftRevision:
			f.Revision = d.str()
		case ftEvidence:
			f.Evidence = d.strs()
		case ftURI:
			f.URI = d.str()
		case ftAckBy:
			f.AckBy = d.str()
		case ftReason:
			f.Reason = d.str()
		case ftSeverity:
			f.Severity = d.str()
		case ftStatus:
			f.Status = d.str()
		case ftName:
			f.Name = d.str()
		case ftPath:
			f.Path = d.str()
		case ftBranch:
			f.Branch = d.str()
		case ftBase:
			f.Base = d.str()
		case ftAgent:
			f.Agent = d.str()
		case ftBackend:
			f.Backend = d.str()
		case ftWorktree:
			f.Worktree = d.str()
		case ftCommand:
			f.Command = d.strs()
		default:
			d.fail()
		}
	}
	return !d.bad
}

func encFact(e *encoder, f *facts.Fact) { e.fact(f) }
func decFact(d *decoder) *facts.Fact    { return d.fact() }

func (e *encoder) key(k facts.Key) { e.int(k.Clock); e.str(k.ID) }
func (d *decoder) key() facts.Key  { return facts.Key{Clock: d.int(), ID: d.str()} }

func encPeer(e *encoder, p *facts.Peer) {
	e.str(p.Tool)
	e.str(p.Session)
	e.str(p.LastAt)
	e.key(p.Last)
	e.bool(p.Left)
	e.str(p.Subject)
	e.str(p.Activity)
	e.str(p.ActivitySince)
}

func decPeer(d *decoder) *facts.Peer {
	return &facts.Peer{Tool: d.str(), Session: d.str(), LastAt: d.str(), Last: d.key(), Left: d.bool(), Subject: d.str(), Activity: d.str(), ActivitySince: d.str()}
}

func encHandoff(e *encoder, h *facts.Handoff) {
	e.fact(h.Fact)
	encodeMap(e, h.Answers, encStr)
	e.str(h.Expired)
	e.str(h.Overdue)
	e.str(h.Delivery)
	e.str(h.Answerer)
	e.fact(h.Rejection)
}

func decHandoff(d *decoder) *facts.Handoff {
	h := &facts.Handoff{Fact: d.fact(), Answers: decodeMap(d, decStr)}
	h.Expired, h.Overdue, h.Delivery, h.Answerer = d.str(), d.str(), d.str(), d.str()
	h.Rejection = d.fact()
	if h.Fact == nil {
		d.fail() // every handoff has its fact
	}
	return h
}

func encArtifact(e *encoder, a *facts.Artifact) { e.fact(a.Fact); e.str(a.For) }
func decArtifact(d *decoder) *facts.Artifact {
	a := &facts.Artifact{Fact: d.fact(), For: d.str()}
	if a.Fact == nil {
		d.fail()
	}
	return a
}

func encPlan(e *encoder, p *facts.PlanRecord) {
	e.fact(p.Fact)
	encodeMap(e, p.Reports, encFact)
	e.fact(p.Closed)
}

func decPlan(d *decoder) *facts.PlanRecord {
	p := &facts.PlanRecord{Fact: d.fact(), Reports: decodeMap(d, decFact), Closed: d.fact()}
	if p.Fact == nil {
		d.fail()
	}
	return p
}

// encodeFacts / decodeFacts: a map of id -> fact whose facts are never nil.
func encodeFacts(e *encoder, m map[string]*facts.Fact) { encodeMap(e, m, encFact) }

func decodeFacts(d *decoder) map[string]*facts.Fact {
	m := decodeMap(d, decFact)
	for _, f := range m {
		if f == nil {
			d.fail()
		}
	}
	return m
}

// encodeHandoffs returns the encoding of st's handoffs: the bytes it was
// loaded with when nothing decoded them since; none for none.
func encodeHandoffs(st *facts.State) []byte {
	if p := st.Pending(); p != nil {
		return p.Enc
	}
	hs := st.Handoffs()
	if len(hs) == 0 {
		return nil
	}
	var e encoder
	encodeMap(&e, hs, encHandoff)
	return e.b
}

// decodeHandoffs is the inverse of encodeHandoffs; no bytes is no handoff.
func decodeHandoffs(b []byte) (map[string]*facts.Handoff, error) {
	if len(b) == 0 {
		return map[string]*facts.Handoff{}, nil
	}
	d := &decoder{b: b}
	m := decodeMap(d, decHandoff)
	if d.bad || len(d.b) != 0 {
		return nil, fmt.Errorf("decoding cached handoffs: damaged")
	}
	return m, nil
}
