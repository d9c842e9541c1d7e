package facts

import (
	"sort"
	"strings"
)

// claimIndex finds, for a claim, the other open claims whose scopes could
// overlap its own, without comparing every pair: two path scopes can
// overlap only when their literal prefixes nest (file = its path, dir =
// its path, glob = its leading segments without pattern characters, see
// Overlap), and other kinds only on equal identifiers. Candidates are then
// checked exactly with ScopesConflict, so the answer is the pairwise one;
// the room costs about the same with 20 open claims or 2,000.
type claimIndex struct {
	exact    map[string][]int // kind:value of non-path scopes -> claim positions
	byPrefix map[string][]int // literal prefix of path scopes -> claim positions
	prefixes []string         // the keys of byPrefix, sorted
	// seen[i] == round marks claim i found in the current candidates
	// call: one slice for all calls instead of a map per call.
	seen  []int
	round int
}

func newClaimIndex(claims []*Fact) *claimIndex {
	ix := &claimIndex{exact: map[string][]int{}, byPrefix: map[string][]int{}, seen: make([]int, len(claims))}
	for i, c := range claims {
		for _, raw := range c.Scopes {
			s := ParseCanonical(raw)
			if !s.IsPath() {
				k := s.Kind + ":" + s.Value
				ix.exact[k] = appendOnce(ix.exact[k], i)
				continue
			}
			p := scopePrefix(s)
			if _, ok := ix.byPrefix[p]; !ok {
				ix.prefixes = append(ix.prefixes, p)
			}
			ix.byPrefix[p] = appendOnce(ix.byPrefix[p], i)
		}
	}
	sort.Strings(ix.prefixes)
	return ix
}

func appendOnce(xs []int, i int) []int {
	if n := len(xs); n > 0 && xs[n-1] == i {
		return xs
	}
	return append(xs, i)
}

func scopePrefix(s Scope) string {
	if s.Kind == "glob" {
		return literalPrefix(s.Value)
	}
	return s.Value
}

// candidates returns, in ascending order, the positions of claims that may
// overlap c.
func (ix *claimIndex) candidates(c *Fact) []int {
	ix.round++
	var out []int
	add := func(is []int) {
		for _, i := range is {
			if ix.seen[i] != ix.round {
				ix.seen[i] = ix.round
				out = append(out, i)
			}
		}
	}
	for _, raw := range c.Scopes {
		s := ParseCanonical(raw)
		if !s.IsPath() {
			add(ix.exact[s.Kind+":"+s.Value])
			continue
		}
		p := scopePrefix(s)
		// Prefixes that contain p: p itself and each ancestor, up to ".".
		for a := p; ; a = parentPrefix(a) {
			add(ix.byPrefix[a])
			if a == "." {
				break
			}
		}
		// Prefixes that p contains.
		if p == "." {
			for _, q := range ix.prefixes {
				add(ix.byPrefix[q])
			}
			continue
		}
		lo := sort.SearchStrings(ix.prefixes, p+"/")
		for _, q := range ix.prefixes[lo:] {
			if !strings.HasPrefix(q, p+"/") {
				break
			}
			add(ix.byPrefix[q])
		}
	}
	sort.Ints(out)
	return out
}
