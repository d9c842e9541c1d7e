package facts

// Which open claims are contested, without comparing every pair: two path
// scopes can overlap only when their literal prefixes nest (file = its
// path, dir = its path, glob = its leading segments without pattern
// characters, see Overlap), and other kinds only on equal identifiers.
// Each claim looks up the claims listed under its own prefixes and their
// ancestors (up to "."), so every nesting pair is met from its deeper
// side, and ScopesConflict decides exactly: the answer is the pairwise
// one, and a room costs about the same per claim with 20 open claims or
// 2,000.

// heldOver returns, for each claim (claims in (clock, id) order), the
// position of the earliest earlier claim of another owner that conflicts
// with it, -1 when none does. pairs, when not nil, counts the pairs
// checked exactly.
func heldOver(claims []*Fact, pairs *int) []int32 {
	held := make([]int32, len(claims))
	for i := range held {
		held[i] = -1
	}
	// Lists of claim positions by key, linked through next: one
	// allocation for all of them instead of a slice per key.
	type link struct{ claim, next int32 }
	links := make([]link, 0, len(claims)+len(claims)/2)
	exact := map[string]int32{}
	paths := make(map[string]int32, len(claims))
	add := func(m map[string]int32, k string, i int) {
		head, ok := m[k]
		if ok && links[head].claim == int32(i) {
			return // two scopes of one claim under one key
		}
		if !ok {
			head = -1
		}
		links = append(links, link{int32(i), head})
		m[k] = int32(len(links) - 1)
	}
	for i, c := range claims {
		for _, raw := range c.Scopes {
			if s, k := scopeKey(raw); s.IsPath() {
				add(paths, k, i)
			} else {
				add(exact, k, i)
			}
		}
	}
	check := func(i int, head int32, ok bool) {
		for e := head; ok && e >= 0; e = links[e].next {
			j := int(links[e].claim)
			if j == i {
				continue
			}
			lo, hi := min(i, j), max(i, j)
			if h := held[hi]; h >= 0 && int(h) <= lo {
				continue // an earlier one holds already
			}
			a, b := claims[lo], claims[hi]
			if pairs != nil {
				*pairs++
			}
			if a.Owner() == b.Owner() {
				continue
			}
			if _, _, conflict := ScopesConflict(a.Scopes, a.Access, b.Scopes, b.Access); conflict {
				held[hi] = int32(lo)
			}
		}
	}
	for i, c := range claims {
		for _, raw := range c.Scopes {
			s, k := scopeKey(raw)
			if !s.IsPath() {
				head, ok := exact[k]
				check(i, head, ok)
				continue
			}
			for a := k; ; a = parentPrefix(a) {
				head, ok := paths[a]
				check(i, head, ok)
				if a == "." {
					break
				}
			}
		}
	}
	return held
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
