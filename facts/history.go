package facts

import (
	"errors"
	"path"
	"strings"

	"github.com/git-rally/git-rally/refs"
)

// FactCommits maps each fact that one of the newest max first-parent
// commits of the ledger introduced to that commit's id (a merge introduces
// what it brought in). Older facts are absent from the map. It reads only
// the trees that changed, so it costs what those commits wrote.
func (l *Ledger) FactCommits(max int) (map[string]string, error) {
	out := map[string]string{}
	h, err := l.Head()
	if err != nil || h.IsZero() {
		return out, err
	}
	for i := 0; i < max && !h.IsZero(); i++ {
		c, err := l.Store.ReadCommit(h)
		if err != nil {
			return out, err
		}
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
			if _, seen := out[id]; !seen {
				out[id] = h.String()
			}
		}
		if len(c.Parents) == 0 {
			break
		}
		h = c.Parents[0]
	}
	return out, nil
}
