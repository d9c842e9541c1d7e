package worktree

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-rally/git-rally/refs"
)

// KeepLocal makes files rally wrote into an agent worktree (the host's
// hook settings) invisible to git in that worktree only, so the agent
// never commits them and the main checkout is not affected: a tracked
// file is marked skip-worktree in the worktree's own index; an untracked
// one is listed in a .gitignore next to it that also ignores itself
// (the .gitignore is then worktree-local too, or, when the repository
// tracks one there, it gets the lines and skip-worktree).
func KeepLocal(wt string, paths []string) error {
	for _, p := range paths {
		rel, err := filepath.Rel(wt, p)
		if err != nil || strings.HasPrefix(rel, "..") {
			return fmt.Errorf("%s is not inside %s", p, wt)
		}
		rel = filepath.ToSlash(rel)
		tracked, err := isTracked(wt, rel)
		if err != nil {
			return err
		}
		if tracked {
			if _, err := refs.Git(wt, quietEnv, "update-index", "--skip-worktree", "--", rel); err != nil {
				return err
			}
			continue
		}
		dir := filepath.Dir(p)
		ignore := filepath.Join(dir, ".gitignore")
		relIgnore := filepath.ToSlash(filepath.Join(filepath.Dir(rel), ".gitignore"))
		ignTracked, err := isTracked(wt, relIgnore)
		if err != nil {
			return err
		}
		lines := "/" + filepath.Base(p) + "\n"
		if !ignTracked {
			lines += "/.gitignore\n"
		}
		old, _ := os.ReadFile(ignore)
		if strings.Contains("\n"+string(old), "\n"+lines) {
			continue
		}
		if len(old) > 0 && !strings.HasSuffix(string(old), "\n") {
			lines = "\n" + lines
		}
		if err := os.WriteFile(ignore, append(old, lines...), 0o644); err != nil {
			return err
		}
		if ignTracked {
			if _, err := refs.Git(wt, quietEnv, "update-index", "--skip-worktree", "--", relIgnore); err != nil {
				return err
			}
		}
	}
	return nil
}

func isTracked(wt, rel string) (bool, error) {
	out, err := refs.Git(wt, quietEnv, "ls-files", "-z", "--", rel)
	if err != nil {
		return false, err
	}
	return out != "", nil
}
