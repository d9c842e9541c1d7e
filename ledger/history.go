package ledger

import (
	"errors"
	"path"
	"strings"

	"github.com/git-rally/git-rally/refs"
)

// FactCommits maps facts to the ledger commit that introduced them (a
// merge introduces what it brought in), walking the first-parent history
// from the head until every id in want is found or max commits are read.
// It reads only the trees that changed, so it costs what those commits
// wrote.
func (l *Ledger) FactCommits(want []string, max int) (map[string]string, error) {
	out := map[string]string{}
	missing := map[string]bool{}
	for _, id := range want {
		missing[id] = true
	}
	h, err := l.Head()
	if err != nil || h.IsZero() {
		return out, err
	}
	c, err := l.Store.ReadCommit(h)
	if err != nil {
		return out, err
	}
	for i := 0; i < max && len(missing) > 0; i++ {
		var parent refs.Commit
		if len(c.Parents) > 0 {
			if parent, err = l.Store.ReadCommit(c.Parents[0]); err != nil {
				return out, err
			}
		}
		added, err := l.diff(parent.Tree, c.Tree)
		if err != nil && !errors.Is(err, errShrank) {
			return out, err
		}
		for _, b := range added {
			id := strings.TrimSuffix(path.Base(b.path), ".json")
			if missing[id] {
				out[id] = h.String()
				delete(missing, id)
			}
		}
		if len(c.Parents) == 0 {
			break
		}
		h, c = c.Parents[0], parent
	}
	return out, nil
}
