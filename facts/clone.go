package facts

// Clone copies the state deeply enough that Apply on the copy leaves the
// original untouched (facts themselves are immutable and shared).
func (s *State) Clone() *State {
	cp := *s
	cp.ByKind = cloneMap(s.ByKind)
	cp.Peers = make(map[string]*Peer, len(s.Peers))
	for k, p := range s.Peers {
		pp := *p
		cp.Peers[k] = &pp
	}
	cp.Claims = s.Claims.clone()
	if s.handoffs != nil {
		cp.handoffs = make(map[string]*Handoff, len(s.handoffs))
		for k, h := range s.handoffs {
			hh := *h
			hh.Answers = cloneMap(h.Answers)
			cp.handoffs[k] = &hh
		}
	}
	cp.Blockers = cloneMap(s.Blockers)
	cp.Risks = cloneMap(s.Risks)
	cp.Sessions = cloneMap(s.Sessions)
	cp.Artifacts = cloneMap(s.Artifacts)
	cp.Retraction = cloneMap(s.Retraction)
	cp.Contest = cloneMap(s.Contest)
	cp.Plans = clonePlans(s.Plans)
	return &cp
}

func cloneMap[K comparable, V any](m map[K]V) map[K]V {
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
