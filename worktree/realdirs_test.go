package worktree

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRealDirsAgreesWithEvalSymlinks holds realDirs' shortcut (the common
// dir <worktree>/.git resolved from the resolved worktree) to resolving
// each directory on its own: a plain layout, a worktree reached through a
// symlink, a .git that is a symlink, a common dir elsewhere, a bare
// repository and paths that do not resolve.
func TestRealDirsAgreesWithEvalSymlinks(t *testing.T) {
	base := t.TempDir()
	for _, d := range []string{"plain/.git", "elsewhere/git", "viadot", "other"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for l, target := range map[string]string{
		"linked":       "plain",
		"viadot/.git":  "../elsewhere/git",
		"linkedviadot": "viadot",
	} {
		if err := os.Symlink(target, filepath.Join(base, l)); err != nil {
			t.Fatal(err)
		}
	}
	j := func(p ...string) string { return filepath.Join(append([]string{base}, p...)...) }
	cases := [][2]string{
		{j("plain", ".git"), j("plain")},
		{j("linked", ".git"), j("linked")},
		{j("viadot", ".git"), j("viadot")},
		{j("linkedviadot", ".git"), j("linkedviadot")},
		{j("elsewhere", "git"), j("other")},
		{j("elsewhere", "git"), ""},
		{j("missing", ".git"), j("missing")},
		{j("plain", ".git"), j("missing")},
		{j("missing", ".git"), ""},
	}
	for _, c := range cases {
		wantCommon, wantWT := c[0], c[1]
		if real, err := filepath.EvalSymlinks(wantCommon); err == nil {
			wantCommon = real
		}
		if wantWT != "" {
			if real, err := filepath.EvalSymlinks(wantWT); err == nil {
				wantWT = real
			}
		}
		if common, wt, _ := realDirs(c[0], c[1]); common != wantCommon || wt != wantWT {
			t.Errorf("realDirs(%q, %q) = %q, %q; want %q, %q", c[0], c[1], common, wt, wantCommon, wantWT)
		}
	}
}
