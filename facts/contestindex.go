package facts

import (
	"hash/maphash"
	"math/bits"
)

// Which open claims are contested, without comparing every pair: two path
// scopes can overlap only when their literal prefixes nest (file = its
// path, dir = its path, glob = its leading segments without pattern
// characters, see Overlap), and other kinds only on equal identifiers.
// More: of a nesting pair with different prefixes, the shallower one must
// be a dir or a glob (a file overlaps only its own path, the dirs that
// contain it and the globs that match it, whose prefixes contain it). So
// claims meet the claims of their exact keys (found through a set of the
// keys' hashes), and each claim looks up the dir and glob claims at its
// prefixes' ancestors (up to "."), usually few or none. Every candidate
// pair is checked exactly with ScopesConflict, so the answer is the
// pairwise one, and a room costs about the same per claim with 20 open
// claims or 2,000.

// heldOver returns, for each claim (claims in (clock, id) order), the
// position of the earliest earlier claim of another owner that conflicts
// with it, -1 when none does. pairs, when not nil, counts the pairs
// checked exactly.
func heldOver(claims []*Fact, pairs *int) []int32 {
	held := make([]int32, len(claims))
	for i := range held {
		held[i] = -1
	}
	check := func(i, j int) {
		if i == j {
			return
		}
		lo, hi := min(i, j), max(i, j)
		if h := held[hi]; h >= 0 && int(h) <= lo {
			return // an earlier one holds already
		}
		a, b := claims[lo], claims[hi]
		if pairs != nil {
			*pairs++
		}
		if a.Owner() == b.Owner() {
			return
		}
		if _, _, conflict := ScopesConflict(a.Scopes, a.Access, b.Scopes, b.Access); conflict {
			held[hi] = int32(lo)
		}
	}
	// Equal keys: every scope's key hashed into an open-addressing set
	// of the hashes (a few pages, no string compared); only the keys
	// whose hash is there twice, usually none, are then grouped exactly.
	seed := maphash.MakeSeed()
	hashOf := func(s Scope, k string) uint64 {
		h := maphash.String(seed, k) | 1 // 0 is an empty slot
		if !s.IsPath() {
			h ^= 2 // other keys never meet path prefixes
		}
		return h
	}
	// Every scope's key, once.
	type scopeRef struct {
		key   string
		claim int32
		kind  uint8 // scopeExact, scopeFile, scopeWide
		hash  uint64
	}
	n := 0
	for _, c := range claims {
		n += len(c.Scopes)
	}
	refs := make([]scopeRef, 0, n)
	for i, c := range claims {
		for _, raw := range c.Scopes {
			s, k := scopeKey(raw)
			r := scopeRef{key: k, claim: int32(i), kind: scopeFile, hash: hashOf(s, k)}
			switch {
			case !s.IsPath():
				r.kind = scopeExact
			case s.Kind != "file":
				r.kind = scopeWide
			}
			refs = append(refs, r)
		}
	}
	table := make([]uint64, 1<<bits.Len(uint(2*n)))
	mask := uint64(len(table) - 1)
	var twice map[uint64]bool
	var wide map[string][]int32 // prefixes of dir and glob scopes
	for _, r := range refs {
		// (Two scopes of one claim under one key count as twice: the
		// exact grouping below sorts that out.)
		slot := r.hash & mask
		for table[slot] != 0 && table[slot] != r.hash {
			slot = (slot + 1) & mask
		}
		if table[slot] == r.hash {
			if twice == nil {
				twice = map[uint64]bool{}
			}
			twice[r.hash] = true
		}
		table[slot] = r.hash
		if r.kind == scopeWide {
			if wide == nil {
				wide = map[string][]int32{}
			}
			if ws := wide[r.key]; len(ws) == 0 || ws[len(ws)-1] != r.claim {
				wide[r.key] = append(ws, r.claim)
			}
		}
	}
	if twice != nil {
		groups := map[string][]int32{}
		for _, r := range refs {
			if !twice[r.hash] {
				continue
			}
			g := r.key
			if r.kind == scopeExact {
				g = "\x00" + g // apart from the path prefixes
			}
			if ms := groups[g]; len(ms) == 0 || ms[len(ms)-1] != r.claim {
				for _, j := range ms {
					check(int(j), int(r.claim))
				}
				groups[g] = append(ms, r.claim)
			}
		}
	}
	if wide == nil {
		return held
	}
	// Dir and glob claims at the proper ancestors of each path prefix:
	// with a few of them, each is compared with every prefix; with many,
	// each prefix's ancestors are looked up.
	if len(wide) <= wideScan {
		for w, js := range wide {
			for _, r := range refs {
				if r.kind != scopeExact && properAncestor(w, r.key) {
					for _, j := range js {
						check(int(r.claim), int(j))
					}
				}
			}
		}
		return held
	}
	for _, r := range refs {
		if r.kind == scopeExact || r.key == "." {
			continue
		}
		for a := parentPrefix(r.key); ; a = parentPrefix(a) {
			for _, j := range wide[a] {
				check(int(r.claim), int(j))
			}
			if a == "." {
				break
			}
		}
	}
	return held
}

// wideScan is how many dir and glob prefixes heldOver compares with every
// prefix before it looks ancestors up instead.
var wideScan = 16

const (
	scopeExact = iota // not a path: meets equal keys only
	scopeFile
	scopeWide // a dir or a glob: also meets the paths below its prefix
)

// properAncestor reports whether prefix a lies strictly above prefix p
// (see parentPrefix: "." is above every other prefix).
func properAncestor(a, p string) bool {
	if a == p {
		return false
	}
	if a == "." {
		return true
	}
	return len(p) > len(a) && p[len(a)] == '/' && p[:len(a)] == a
}

// scopeKey is a scope parsed and its index key: the literal prefix of a
// path scope, kind:value of any other.
func scopeKey(raw string) (Scope, string) {
	s := ParseCanonical(raw)
	switch {
	case s.IsPath():
		return s, scopePrefix(s)
	case len(raw) > len(s.Kind) && raw[len(s.Kind)] == ':':
		return s, raw // raw is kind:value already
	}
	return s, s.Kind + ":" + s.Value
}

func scopePrefix(s Scope) string {
	if s.Kind == "glob" {
		return literalPrefix(s.Value)
	}
	return s.Value
}
