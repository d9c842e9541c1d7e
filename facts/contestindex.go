package facts

// Which open claims are contested, without comparing every pair: two path
// scopes can overlap only when their literal prefixes nest (file = its
// path, dir = its path, glob = its leading segments without pattern
// characters, see Overlap), and other kinds only on equal identifiers.
// More: of a nesting pair with different prefixes, the shallower one must
// be a dir or a glob (a file overlaps only its own path, the dirs that
// contain it and the globs that match it, whose prefixes contain it). So
// claims are grouped by their exact keys, and each claim looks up the dir
// and glob claims at its prefixes' ancestors (up to "."): there are
// usually none, and then a claim costs one map lookup a scope. Every
// candidate pair is checked exactly with ScopesConflict, so the answer is
// the pairwise one, and a room costs about the same per claim with 20
// open claims or 2,000.

// heldOver returns, for each claim (claims in (clock, id) order), the
// position of the earliest earlier claim of another owner that conflicts
// with it, -1 when none does. pairs, when not nil, counts the pairs
// checked exactly.
func heldOver(claims []*Fact, pairs *int) []int32 {
	held := make([]int32, len(claims))
	for i := range held {
		held[i] = -1
	}
	// Lists of claim positions by key, linked through next (0 ends a
	// list, entry e is links[e-1]): one allocation for all of them
	// instead of a slice per key.
	type link struct{ claim, next int32 }
	links := make([]link, 0, len(claims)+len(claims)/4)
	check := func(i int, e int32) {
		for ; e > 0; e = links[e-1].next {
			j := int(links[e-1].claim)
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
	// Equal keys: each claim meets the earlier ones of its key as it is
	// added.
	same := make(map[string]int32, len(claims))
	exact := map[string]int32{}
	var wide map[string]int32 // prefixes of dir and glob scopes
	add := func(m map[string]int32, k string, i int) {
		head := m[k]
		if head > 0 && links[head-1].claim == int32(i) {
			return // two scopes of one claim under one key
		}
		check(i, head)
		links = append(links, link{int32(i), head})
		m[k] = int32(len(links))
	}
	for i, c := range claims {
		for _, raw := range c.Scopes {
			s, k := scopeKey(raw)
			switch {
			case !s.IsPath():
				add(exact, k, i)
			case s.Kind == "file":
				add(same, k, i)
			default:
				add(same, k, i)
				if wide == nil {
					wide = map[string]int32{}
				}
				if head := wide[k]; head == 0 || links[head-1].claim != int32(i) {
					links = append(links, link{int32(i), head})
					wide[k] = int32(len(links))
				}
			}
		}
	}
	if wide == nil {
		return held
	}
	// Dir and glob claims at the proper ancestors of each path prefix.
	for i, c := range claims {
		for _, raw := range c.Scopes {
			s, k := scopeKey(raw)
			if !s.IsPath() || k == "." {
				continue
			}
			for a := parentPrefix(k); ; a = parentPrefix(a) {
				check(i, wide[a])
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
