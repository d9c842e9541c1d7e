package worktree

import "github.com/git-rally/git-rally/facts"

// reported returns the plan reports a session wrote (SPEC §15). A report
// names the scopes its task owned; the changes they cover are accounted
// for after the report released the task's claim, so the plan does not
// ask to claim them again.
func reported(st *facts.State, session string) []*facts.Fact {
	if session == "" {
		return nil
	}
	var out []*facts.Fact
	for _, p := range st.Plans {
		for _, r := range p.Reports {
			if r.Session == session {
				out = append(out, r)
			}
		}
	}
	return out
}

// unblocked marks the candidates that may merge next: those whose session
// follows (After) no session with a candidate still to merge. When every
// one waits on another (a cycle), all may.
func (p *Plan) unblocked(cand []*Row) []bool {
	pending := map[string]bool{}
	for _, row := range cand {
		if row.Session != "" {
			pending[row.Session] = true
		}
	}
	free := make([]bool, len(cand))
	any := false
	for i, row := range cand {
		free[i] = true
		for _, s := range p.after[row.Session] {
			if s != row.Session && pending[s] {
				free[i] = false
			}
		}
		any = any || free[i]
	}
	if !any {
		for i := range free {
			free[i] = true
		}
	}
	return free
}
