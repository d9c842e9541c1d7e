package worktree

import "sort"

// order fills Order and Steps: the branches with commits to merge, those
// predicted to merge cleanly first. Greedily, the next branch is the one
// that conflicts with the fewest of the base and the branches already
// merged; ties go to fewer conflicts overall, then fewer changed files,
// then the branch name, so the order is deterministic. A branch whose
// session's plan task depends on another's waits for that one (After).
func (p *Plan) order() {
	var cand []*Row
	for _, row := range p.Rows {
		if row.mergeable() && row.Branch != "" {
			cand = append(cand, row)
		}
	}
	conflict := map[[2]string][]string{}
	degree := map[string]int{}
	for _, c := range p.Conflicts {
		conflict[[2]string{c.A, c.B}] = c.Files
		conflict[[2]string{c.B, c.A}] = c.Files
		degree[c.A]++
		degree[c.B]++
	}
	sort.SliceStable(cand, func(i, j int) bool {
		a, b := cand[i], cand[j]
		if (len(a.BaseConflicts) > 0) != (len(b.BaseConflicts) > 0) {
			return len(b.BaseConflicts) > 0
		}
		if degree[a.Branch] != degree[b.Branch] {
			return degree[a.Branch] < degree[b.Branch]
		}
		if len(a.Changed) != len(b.Changed) {
			return len(a.Changed) < len(b.Changed)
		}
		return a.Branch < b.Branch
	})
	p.Order, p.Steps = []string{}, []Step{}
	var merged []string
	for len(cand) > 0 {
		best, bestStep := -1, Step{}
		free := p.unblocked(cand)
		for i, row := range cand {
			if !free[i] {
				continue
			}
			st := Step{Branch: row.Branch}
			var files []string
			if len(row.BaseConflicts) > 0 {
				st.With = append(st.With, p.Base)
				files = append(files, row.BaseConflicts...)
			}
			for _, m := range merged {
				if fs, ok := conflict[[2]string{m, row.Branch}]; ok {
					st.With = append(st.With, m)
					files = append(files, fs...)
				}
			}
			st.Conflict = len(st.With) > 0
			st.Files = sortedSet(files)
			if best < 0 || len(st.With) < len(bestStep.With) {
				best, bestStep = i, st
			}
			if !st.Conflict {
				break
			}
		}
		p.Order = append(p.Order, bestStep.Branch)
		p.Steps = append(p.Steps, bestStep)
		merged = append(merged, bestStep.Branch)
		cand = append(cand[:best], cand[best+1:]...)
	}
}
