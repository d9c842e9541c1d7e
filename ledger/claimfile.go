package ledger

import (
	"bytes"
	"encoding/binary"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/git-rally/git-rally/facts"
)

// ClaimsDecoded counts the claims decoded from cache claims files by this
// process, and ClaimBytesDecoded their bytes: what a test of an append's
// cost reads.
var ClaimsDecoded, ClaimBytesDecoded atomic.Int64

// A claims file's payload, all offsets from its start, little-endian:
//
//	nrec uint32, nkey uint32
//	rec  [nrec+1]uint32   record i is bytes rec[i]:rec[i+1], one fact
//	key  [nkey+1]uint32   key j is bytes key[j]:key[j+1]: a string and a
//	                      record number, keys in byte order
//	records, keys
//
// A lookup is a binary search over the keys: nothing is decoded before a
// record is asked for, so opening the file costs its read and checksum.
type claimBase struct {
	b          []byte
	nrec, nkey int
	mu         sync.Mutex
	memo       []*facts.Fact // decoded records, allocated on first use
	damaged    atomic.Bool
	name       string // the cache file it came from
	sum        uint32 // its payload's CRC-32
}

// isDamaged reports a record or key that did not decode.
func (cb *claimBase) isDamaged() bool { return cb != nil && cb.damaged.Load() }

func encodeClaimBase(claims []*facts.Fact) []byte {
	facts.SortFacts(claims)
	type kv struct {
		k string
		i int
	}
	var keys []kv
	var recs [][]byte
	for i, f := range claims {
		var e encoder
		e.fact(f)
		recs = append(recs, e.b)
		for _, k := range facts.ClaimKeys(f) {
			keys = append(keys, kv{k, i})
		}
	}
	sort.SliceStable(keys, func(a, b int) bool { return keys[a].k < keys[b].k })
	// Dedupe: a claim with two scopes of one prefix is listed once.
	out := keys[:0]
	for _, x := range keys {
		if n := len(out); n > 0 && out[n-1] == x {
			continue
		}
		out = append(out, x)
	}
	keys = out
	hdr := 8 + 4*(len(recs)+1) + 4*(len(keys)+1)
	b := make([]byte, hdr, hdr+len(recs)*160+len(keys)*32)
	binary.LittleEndian.PutUint32(b[0:], uint32(len(recs)))
	binary.LittleEndian.PutUint32(b[4:], uint32(len(keys)))
	at := 8
	for _, r := range recs {
		binary.LittleEndian.PutUint32(b[at:], uint32(len(b)))
		b = append(b, r...)
		at += 4
	}
	binary.LittleEndian.PutUint32(b[at:], uint32(len(b)))
	at += 4
	for _, x := range keys {
		binary.LittleEndian.PutUint32(b[at:], uint32(len(b)))
		b = binary.AppendUvarint(b, uint64(len(x.k)))
		b = append(b, x.k...)
		b = binary.AppendUvarint(b, uint64(x.i))
		at += 4
	}
	binary.LittleEndian.PutUint32(b[at:], uint32(len(b)))
	return b
}

// openClaimBase checks the payload's table sizes; the entries are checked
// when read.
func openClaimBase(b []byte) (*claimBase, bool) {
	if len(b) < 8 {
		return nil, false
	}
	nrec, nkey := binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:])
	if uint64(nrec)+uint64(nkey)+2 > uint64(len(b)-8)/4 {
		return nil, false
	}
	return &claimBase{b: b, nrec: int(nrec), nkey: int(nkey)}, true
}

// guard, deferred, turns a panic reading a claims file into a damaged
// file, not a crash.
func (cb *claimBase) guard() {
	if recover() != nil {
		cb.damaged.Store(true)
	}
}

func (cb *claimBase) Len() int {
	if cb == nil {
		return 0
	}
	return cb.nrec
}

// span returns entry i of the offset table at table with n entries (n+1
// offsets), nil when the table is damaged.
func (cb *claimBase) span(table, n, i int) []byte {
	lo, hi, ok := cb.bounds(table, n, i)
	if !ok {
		return nil
	}
	return cb.b[lo:hi]
}

func (cb *claimBase) bounds(table, n, i int) (int, int, bool) {
	if i < 0 || i >= n {
		return 0, 0, false
	}
	at := table + 4*i
	lo, hi := binary.LittleEndian.Uint32(cb.b[at:]), binary.LittleEndian.Uint32(cb.b[at+4:])
	if lo > hi || int(hi) > len(cb.b) {
		cb.damaged.Store(true)
		return 0, 0, false
	}
	return int(lo), int(hi), true
}

func (cb *claimBase) keyTable() int { return 8 + 4*(cb.nrec+1) }

// key returns key j and its record number.
func (cb *claimBase) key(j int) ([]byte, uint32) {
	e := cb.span(cb.keyTable(), cb.nkey, j)
	d := decoder{b: e}
	k := d.bytes()
	i := d.uint()
	if d.bad || i >= uint64(cb.nrec) {
		cb.damaged.Store(true)
		return nil, 0
	}
	return k, uint32(i)
}

// lookup returns the record numbers listed under key k.
func (cb *claimBase) Lookup(k string) []uint32 { return cb.keysFrom(k, bytes.Equal) }

// lookupPrefix returns the record numbers of every key starting with p.
func (cb *claimBase) LookupPrefix(p string) []uint32 { return cb.keysFrom(p, bytes.HasPrefix) }

// keysFrom returns the record numbers of the sorted keys from the first
// one not below k, for as long as match(key, k) holds.
func (cb *claimBase) keysFrom(k string, match func(key, k []byte) bool) (out []uint32) {
	if cb == nil {
		return nil
	}
	defer cb.guard()
	kb := []byte(k)
	j := sort.Search(cb.nkey, func(j int) bool { kj, _ := cb.key(j); return bytes.Compare(kj, kb) >= 0 })
	for ; j < cb.nkey; j++ {
		kj, i := cb.key(j)
		if !match(kj, kb) {
			break
		}
		out = append(out, i)
	}
	return out
}

func (cb *claimBase) Find(id string) (uint32, bool) {
	is := cb.Lookup("i" + id)
	if len(is) == 0 {
		return 0, false
	}
	return is[0], true
}

// fact decodes record i (once per process: the same claim is the same
// pointer every time), nil when it does not decode.
func (cb *claimBase) Fact(i uint32) (f *facts.Fact) {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	return cb.factLocked(i)
}

// factLocked is fact with cb.mu held.
func (cb *claimBase) factLocked(i uint32) (f *facts.Fact) {
	defer cb.guard()
	if int(i) >= cb.nrec {
		return nil
	}
	if cb.memo == nil {
		cb.memo = make([]*facts.Fact, cb.nrec)
	}
	if f := cb.memo[i]; f != nil {
		return f
	}
	r := cb.span(8, cb.nrec, int(i))
	nf := &facts.Fact{}
	if !cb.decode(r, string(r), nf) {
		return nil
	}
	cb.memo[i] = nf
	return nf
}

// appendAll decodes every record (decodeAll) and appends those that
// decode and are not gone to out, in record order.
func (cb *claimBase) AppendAll(out []*facts.Fact, gone map[uint32]bool) []*facts.Fact {
	cb.decodeAll()
	cb.mu.Lock()
	defer cb.mu.Unlock()
	for i := 0; i < cb.nrec; i++ {
		if gone[uint32(i)] {
			continue
		}
		f := cb.memo[i]
		if f == nil { // decodeAll could not reach it: one at a time
			f = cb.factLocked(uint32(i))
		}
		if f != nil {
			out = append(out, f)
		}
	}
	return out
}

// decodeAll decodes every record not decoded yet, their strings cut
// from one copy of the records and their facts from one allocation: what
// a room, which shows every claim, needs.
func (cb *claimBase) decodeAll() {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	defer cb.guard()
	if cb.memo == nil {
		cb.memo = make([]*facts.Fact, cb.nrec)
	}
	lo, _, ok1 := cb.bounds(8, cb.nrec, 0)
	_, hi, ok2 := cb.bounds(8, cb.nrec, cb.nrec-1)
	if !ok1 || !ok2 || lo > hi {
		return
	}
	// One copy of the records, never changed after: the strings are cut
	// from it.
	buf := make([]byte, hi-lo)
	prefault(unsafe.Pointer(unsafe.SliceData(buf)), uintptr(len(buf)))
	copy(buf, cb.b[lo:hi])
	src := unsafe.String(unsafe.SliceData(buf), len(buf))
	slab := make([]facts.Fact, cb.nrec)
	prefault(unsafe.Pointer(unsafe.SliceData(slab)), uintptr(len(slab))*unsafe.Sizeof(facts.Fact{}))
	// Most claims have a scope or two: their lists share one array.
	arena := make([]string, 0, cb.nrec+cb.nrec/2)
	var n, size int64
	defer func() { ClaimsDecoded.Add(n); ClaimBytesDecoded.Add(size) }()
	for i := range cb.memo {
		if cb.memo[i] != nil {
			continue
		}
		a, b, ok := cb.bounds(8, cb.nrec, i)
		if !ok || a < lo || b > hi {
			cb.damaged.Store(true)
			continue
		}
		if cb.decodeIn(cb.b[a:b], src[a-lo:b-lo], &slab[i], &arena) {
			cb.memo[i] = &slab[i]
			n, size = n+1, size+int64(b-a)
		}
	}
}

// decode decodes record r (src holds the same bytes) into f.
func (cb *claimBase) decode(r []byte, src string, f *facts.Fact) bool {
	if !cb.decodeIn(r, src, f, nil) {
		return false
	}
	ClaimsDecoded.Add(1)
	ClaimBytesDecoded.Add(int64(len(r)))
	return true
}

// decodeIn is decode with string lists cut from *arena while it has room.
func (cb *claimBase) decodeIn(r []byte, src string, f *facts.Fact, arena *[]string) bool {
	d := decoder{b: r, src: src}
	if arena != nil {
		d.arena = *arena
	}
	ok := d.bool() && d.factInto(f) && len(d.b) == 0
	if arena != nil {
		*arena = d.arena
	}
	if !ok {
		// The file passed its checksum: only a bug gets here. The
		// projection is not saved (State.Damaged).
		cb.damaged.Store(true)
		return false
	}
	return true
}

// claimsFile is the claims file a projection's claims are based on, nil
// when there is none.
func claimsFile(cs *facts.ClaimSet) *claimBase {
	cb, _ := cs.Base.(*claimBase)
	return cb
}

// openClaimsFile reads a claims file and checks its seal and its checksum
// against the one state.bin names; nil when it is missing or damaged.
func openClaimsFile(p string, sum uint32) (cb *claimBase) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil
	}
	defer func() {
		if recover() != nil { // a damaged file the checks let through
			cb = nil
		}
	}()
	payload, _, got, ok := openSealedSum(b, "claims")
	if !ok || got != sum {
		return nil
	}
	cb, ok = openClaimBase(payload)
	if !ok {
		return nil
	}
	cb.sum = sum
	return cb
}
