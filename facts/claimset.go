package facts

import (
	"encoding/json"
	"strings"
)

// ClaimSet is the open claims of a projection. A projection loaded from
// the ledger's cache keeps most of them in a Base (the cache's claims
// file), decoded one by one when a lookup needs them: an append decodes
// the claims its scopes could overlap and its owner's, not every open
// claim. The claims opened since that base was written are in Added, the
// ones of the base closed since in Gone; the cache writes a new base when
// they add up. Only the ledger's cache sets the fields; the rules go
// through the methods.
type ClaimSet struct {
	Base  ClaimIndex
	Gone  map[uint32]bool
	Added map[string]*Fact
}

// ClaimIndex is a read-only set of claims by record number, looked up by
// the keys ClaimKeys gives: the ledger's claims file implements it.
type ClaimIndex interface {
	Len() int
	Find(id string) (uint32, bool)
	Fact(i uint32) *Fact
	AppendAll(out []*Fact, gone map[uint32]bool) []*Fact
	Lookup(key string) []uint32
	LookupPrefix(prefix string) []uint32
}

type noClaims struct{}

func (noClaims) Len() int                                         { return 0 }
func (noClaims) Find(string) (uint32, bool)                       { return 0, false }
func (noClaims) Fact(uint32) *Fact                                { return nil }
func (noClaims) AppendAll(out []*Fact, _ map[uint32]bool) []*Fact { return out }
func (noClaims) Lookup(string) []uint32                           { return nil }
func (noClaims) LookupPrefix(string) []uint32                     { return nil }

func (c *ClaimSet) base() ClaimIndex {
	if c.Base == nil {
		return noClaims{}
	}
	return c.Base
}

// Get returns the open claim with this id, nil when there is none.
func (c *ClaimSet) Get(id string) *Fact {
	if f := c.Added[id]; f != nil {
		return f
	}
	if i, ok := c.base().Find(id); ok && !c.Gone[i] {
		return c.base().Fact(i)
	}
	return nil
}

// Len is the number of open claims.
func (c *ClaimSet) Len() int { return c.base().Len() - len(c.Gone) + len(c.Added) }

// All returns every open claim in (clock, id) order.
func (c *ClaimSet) All() []*Fact {
	out := make([]*Fact, 0, c.Len())
	if c.base().Len() > 0 {
		out = c.base().AppendAll(out, c.Gone)
	}
	for _, f := range c.Added {
		out = append(out, f)
	}
	SortFacts(out)
	return out
}

// MarshalJSON writes the claims as the map they are by id.
func (c ClaimSet) MarshalJSON() ([]byte, error) {
	m := map[string]*Fact{}
	for _, f := range c.All() {
		m[f.ID] = f
	}
	return json.Marshal(m)
}

func (c *ClaimSet) Put(f *Fact) {
	if i, ok := c.base().Find(f.ID); ok {
		delete(c.Gone, i) // the same id is the same claim
		return
	}
	if c.Added == nil {
		c.Added = map[string]*Fact{}
	}
	c.Added[f.ID] = f
}

func (c *ClaimSet) Delete(id string) {
	if _, ok := c.Added[id]; ok {
		delete(c.Added, id)
		return
	}
	if i, ok := c.base().Find(id); ok {
		if c.Gone == nil {
			c.Gone = map[uint32]bool{}
		}
		c.Gone[i] = true
	}
}

func (c *ClaimSet) clone() ClaimSet {
	return ClaimSet{Base: c.Base, Gone: cloneMap(c.Gone), Added: cloneMap(c.Added)}
}

// Delta is how many changes the set holds on top of its base.
func (c *ClaimSet) Delta() int { return len(c.Gone) + len(c.Added) }

// open returns the claims at base positions is that are still open, and
// the added claims that keep, in (clock, id) order.
func (c *ClaimSet) open(is []uint32, keep func(*Fact) bool) []*Fact {
	var out []*Fact
	for _, i := range is {
		if !c.Gone[i] {
			if f := c.base().Fact(i); f != nil && keep(f) {
				out = append(out, f)
			}
		}
	}
	for _, f := range c.Added {
		if keep(f) {
			out = append(out, f)
		}
	}
	SortFacts(out)
	return out
}

// Owned returns o's open claims in (clock, id) order.
func (c *ClaimSet) Owned(o Owner) []*Fact {
	return c.open(c.base().Lookup(ownerKey(o)), func(f *Fact) bool { return f.Owner() == o })
}

// holders returns a test of whether an owner (Owner.String) holds an
// open claim: the added claims are gathered once, the claims file is
// looked up per owner.
func (c *ClaimSet) holders() func(owner string) bool {
	added := make(map[string]bool, len(c.Added))
	for _, f := range c.Added {
		added[f.Owner().String()] = true
	}
	return func(owner string) bool {
		if added[owner] {
			return true
		}
		for _, i := range c.base().Lookup("o" + owner) {
			if !c.Gone[i] {
				return true
			}
		}
		return false
	}
}

// Near returns, in (clock, id) order, the open claims whose scopes may
// overlap any of scopes: every claim that does, and a few that do not
// (the caller checks exactly). See contestindex.go for which prefixes can
// overlap.
func (c *ClaimSet) Near(scopes []string) []*Fact {
	var is []uint32
	seen := map[uint32]bool{}
	add := func(xs []uint32) {
		for _, i := range xs {
			if !seen[i] {
				seen[i] = true
				is = append(is, i)
			}
		}
	}
	for _, raw := range scopes {
		s := ParseCanonical(raw)
		if !s.IsPath() {
			add(c.base().Lookup("e" + s.Kind + ":" + s.Value))
			continue
		}
		p := scopePrefix(s)
		for a := p; ; a = parentPrefix(a) {
			add(c.base().Lookup("p" + a))
			if a == "." {
				break
			}
		}
		if p == "." {
			add(c.base().LookupPrefix("p"))
		} else {
			add(c.base().LookupPrefix("p" + p + "/"))
		}
	}
	return c.open(is, func(*Fact) bool { return true })
}

// parentPrefix is the directory above a literal prefix, "." at the top.
func parentPrefix(a string) string {
	if i := strings.LastIndexByte(a, '/'); i >= 0 {
		return a[:i]
	}
	return "."
}

func ownerKey(o Owner) string { return "o" + o.String() }

// ClaimKeys are the index keys of a claim: its id, its owner, and per
// scope the kind and value of a non-path scope or the literal prefix of
// a path scope.
func ClaimKeys(f *Fact) []string {
	ks := []string{"i" + f.ID, ownerKey(f.Owner())}
	for _, raw := range f.Scopes {
		s := ParseCanonical(raw)
		if s.IsPath() {
			ks = append(ks, "p"+scopePrefix(s))
		} else {
			ks = append(ks, "e"+s.Kind+":"+s.Value)
		}
	}
	return ks
}
