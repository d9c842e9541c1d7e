package worktree

import "sort"

// Agent is a linked worktree under .rally/worktrees.
type Agent struct {
	Name string
	Linked
	Dirty []string // `git status --porcelain` entries; nil when the directory is gone
}

// Agents lists the rally worktrees, sorted by name, with their dirty
// paths. Like Plan it changes nothing.
func (r *Repo) Agents() ([]Agent, error) {
	wts, err := r.Worktrees()
	if err != nil {
		return nil, err
	}
	var out []Agent
	for _, w := range wts {
		name := r.nameOf(w.Path)
		if name == "" {
			continue
		}
		a := Agent{Name: name, Linked: w}
		if !w.Prunable {
			if a.Dirty, err = Dirty(w.Path); err != nil {
				return nil, err
			}
		}
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
