package hooks

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/worktree"
)

// The handoffs an agent has been shown are machine-local state: each
// appears in its context once, and forgetting (deleting the file) only
// shows them again.
type shownFile struct {
	Owner string   `json:"owner"`
	IDs   []string `json:"ids"`
}

func shownPath(r *worktree.Repo, o facts.Owner) string {
	return filepath.Join(r.RallyDir(), "hooks", "shown", digest([]byte(o.String()))[:16]+".json")
}

func loadShown(r *worktree.Repo, o facts.Owner) map[string]bool {
	seen := map[string]bool{}
	b, err := os.ReadFile(shownPath(r, o))
	if err != nil {
		return seen
	}
	var sf shownFile
	if json.Unmarshal(b, &sf) != nil || sf.Owner != o.String() {
		return seen
	}
	for _, id := range sf.IDs {
		seen[id] = true
	}
	return seen
}

// saveShown records ids as shown; ids no longer waiting are forgotten so
// the file stays as small as the inbox.
func saveShown(r *worktree.Repo, o facts.Owner, ids []string) error {
	p := shownPath(r, o)
	if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
		return err
	}
	b, err := json.Marshal(shownFile{Owner: o.String(), IDs: ids})
	if err != nil {
		return err
	}
	return writeAtomic(p, b, 0o666)
}
