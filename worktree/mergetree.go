package worktree

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-rally/git-rally/refs"
)

// merge is one merge to predict: two commits.
type merge struct{ a, b string }

// mergeResult is what `git merge-tree --write-tree` predicts for a merge.
type mergeResult struct {
	Clean     bool
	Tree      string
	Conflicts []string // paths with conflicts
}

// predictMerges runs every merge in one `git merge-tree --stdin` process.
// The trees it writes go to a throw-away object directory that borrows the
// repository's objects as an alternate, so the repository gains no object
// and no ref, and its index and worktrees are never touched.
func (r *Repo) predictMerges(ms []merge) ([]mergeResult, error) {
	if len(ms) == 0 {
		return nil, nil
	}
	tmp, err := os.MkdirTemp("", "rally-merge-tree-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	objects := os.Getenv("GIT_OBJECT_DIRECTORY")
	if objects == "" {
		objects = filepath.Join(r.CommonDir, "objects")
	}
	alternates := objects
	if alt := os.Getenv("GIT_ALTERNATE_OBJECT_DIRECTORIES"); alt != "" {
		alternates += string(os.PathListSeparator) + alt
	}
	env := append(append([]string(nil), quietEnv...),
		"GIT_OBJECT_DIRECTORY="+tmp,
		"GIT_ALTERNATE_OBJECT_DIRECTORIES="+alternates)
	var in strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&in, "%s %s\n", m.a, m.b)
	}
	out, err := refs.GitInput(r.Dir(), env, []byte(in.String()),
		"merge-tree", "--write-tree", "--stdin", "-z", "--name-only", "--no-messages", "--allow-unrelated-histories")
	if err != nil {
		return nil, err
	}
	return parseMergeTree(out, len(ms))
}

// parseMergeTree reads the output of `merge-tree --stdin -z --name-only
// --no-messages`: per merge, the status (1 clean, 0 conflicts), the tree,
// the conflicted paths, and an empty field.
func parseMergeTree(out string, n int) ([]mergeResult, error) {
	toks := strings.Split(out, "\x00")
	res := make([]mergeResult, 0, n)
	i := 0
	for len(res) < n {
		if i+1 >= len(toks) {
			return nil, fmt.Errorf("git merge-tree: %d of %d results", len(res), n)
		}
		m := mergeResult{Clean: toks[i] == "1", Tree: toks[i+1]}
		if toks[i] != "0" && toks[i] != "1" {
			return nil, fmt.Errorf("git merge-tree: unexpected status %q", toks[i])
		}
		i += 2
		for ; i < len(toks) && toks[i] != ""; i++ {
			m.Conflicts = append(m.Conflicts, toks[i])
		}
		i++ // the empty field ending this merge
		res = append(res, m)
	}
	return res, nil
}
