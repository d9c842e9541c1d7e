package facts

// Concerns reports whether fact f concerns tool (what `watch --tool`
// keeps, SPEC §14): handoffs to tool or to all, answers to tool's
// handoffs, claims and blockers overlapping tool's open claims, the lead's
// freeze, the lead seat given to or taken from tool, risks and
// retractions of tool's facts, deliveries to tool. tool's own facts do
// not concern it. authorOf returns the author of a fact id ("" when
// unknown); st is the projection the claims are taken from.
func Concerns(st *State, tool string, f *Fact, authorOf func(id string) string) bool {
	if f.Tool == tool {
		return false
	}
	switch f.Kind {
	case KindHandoff:
		return f.Target == tool || f.Target == AllTarget
	case KindReceipt, KindResolve, KindArtifact:
		if f.Kind == KindArtifact && f.Target == tool {
			return true
		}
		return f.Ref != "" && authorOf(f.Ref) == tool
	case KindDelivery:
		return f.Target == tool
	case KindLead:
		// the seat given to tool, or taken from it
		return f.Target == tool || containsStr(f.Evidence, "displaced:"+tool) || containsStr(f.Evidence, "reaper:stale-lead="+tool)
	case KindRisk, KindRetract:
		return f.Ref != "" && authorOf(f.Ref) == tool
	case KindClaim, KindBlocker:
		if f.Kind == KindBlocker && Unscoped(f) && f.Tool == st.LeadHolder() {
			return true // the lead freezes the room: everyone's writes stop
		}
		for _, c := range st.Claims.Near(f.Scopes) {
			if c.Tool != tool {
				continue
			}
			if _, _, ok := ScopesConflict(c.Scopes, Exclusive, f.Scopes, Exclusive); ok {
				return true
			}
		}
	}
	return false
}
