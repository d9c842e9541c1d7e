package facts

import (
	"sort"
	"strings"
)

// Which of one fact's many scopes overlap a scope, without comparing each:
// a path scope can overlap another only when their literal prefixes nest
// (see contestindex.go), and any other scope only its equal. So a scope
// meets the scopes under its own key, those at the ancestors of its prefix
// and, when it is a dir or a glob, those below its prefix. A check of
// 4,000 paths against a claim of 100,000 scopes compares each path with a
// few scopes, not all of them.

// scopeIndexMin is how many scopes a fact has before the check indexes
// them rather than comparing each.
const scopeIndexMin = 16

// scopeIndex indexes one fact's scopes by key (scopeKey with a kind mark:
// "p" and the literal prefix of a path scope, "e" and kind:value of any
// other).
type scopeIndex struct {
	scopes []Scope
	byKey  map[string][]int32
	sorted []keyPos // path scopes by prefix, for the ones below a prefix
	ready  bool     // sorted is sorted (on the first dir or glob asked)
}

type keyPos struct {
	key string
	pos int32
}

func newScopeIndex(raw []string) *scopeIndex {
	x := &scopeIndex{scopes: make([]Scope, len(raw)), byKey: make(map[string][]int32, len(raw))}
	for i, r := range raw {
		s, k := scopeKey(r)
		x.scopes[i] = s
		if s.IsPath() {
			x.sorted = append(x.sorted, keyPos{k, int32(i)})
			k = "p" + k
		} else {
			k = "e" + k
		}
		x.byKey[k] = append(x.byKey[k], int32(i))
	}
	return x
}

// first returns the position of the first scope that overlaps q, -1 when
// none does. compared, when not nil, counts the exact comparisons.
func (x *scopeIndex) first(q Scope, compared *int) int {
	var cand []int32
	if !q.IsPath() {
		_, k := scopeKey(q.String())
		cand = x.byKey["e"+k]
	} else {
		p := scopePrefix(q)
		cand = append(cand, x.byKey["p"+p]...)
		for a := p; a != "."; {
			a = parentPrefix(a)
			cand = append(cand, x.byKey["p"+a]...)
		}
		if q.Kind != "file" {
			// A dir or a glob also meets what lies below its prefix; a
			// file meets nothing there.
			if !x.ready {
				sort.Slice(x.sorted, func(i, j int) bool { return x.sorted[i].key < x.sorted[j].key })
				x.ready = true
			}
			lo, hi := 0, len(x.sorted)
			if p != "." {
				below := p + "/"
				lo = sort.Search(len(x.sorted), func(i int) bool { return x.sorted[i].key >= below })
				hi = lo + sort.Search(len(x.sorted)-lo, func(i int) bool { return !strings.HasPrefix(x.sorted[lo+i].key, below) })
			}
			for _, kp := range x.sorted[lo:hi] {
				if kp.key != p {
					cand = append(cand, kp.pos)
				}
			}
		}
		sort.Slice(cand, func(i, j int) bool { return cand[i] < cand[j] })
	}
	for _, i := range cand {
		if compared != nil {
			*compared++
		}
		if Overlap(x.scopes[i], q) {
			return int(i)
		}
	}
	return -1
}

// overlapIndex finds the first of a fact's scopes overlapping a scope:
// by a scan when the fact has few, through an index built once per fact
// when it has many.
type overlapIndex struct {
	byFact   map[*Fact]*scopeIndex
	compared *int // when not nil, counts exact comparisons (tests)
}

func (o *overlapIndex) first(f *Fact, q Scope) (string, bool) {
	if len(f.Scopes) < scopeIndexMin {
		for _, sc := range f.Scopes {
			if o.compared != nil {
				*o.compared++
			}
			if Overlap(ParseCanonical(sc), q) {
				return sc, true
			}
		}
		return "", false
	}
	x := o.byFact[f]
	if x == nil {
		if o.byFact == nil {
			o.byFact = map[*Fact]*scopeIndex{}
		}
		x = newScopeIndex(f.Scopes)
		o.byFact[f] = x
	}
	if i := x.first(q, o.compared); i >= 0 {
		return f.Scopes[i], true
	}
	return "", false
}

// scopesConflictIndexed is ScopesConflict's pair for two long lists: the
// first of a that overlaps any of b (the least of a's first overlap with
// each of b), and the first of b that overlaps it.
func scopesConflictIndexed(a, b []string) (string, string, bool) {
	ia, ib := newScopeIndex(a), newScopeIndex(b)
	best := -1
	for _, y := range ib.scopes {
		if i := ia.first(y, nil); i >= 0 && (best < 0 || i < best) {
			best = i
		}
	}
	if best < 0 {
		return "", "", false
	}
	return a[best], b[ib.first(ia.scopes[best], nil)], true
}
