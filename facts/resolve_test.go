package facts

import (
	"os"
	"path/filepath"
	"testing"
)

// TestResolveUnderAgreesWithResolveLenient holds the walk from the
// resolved root to the lenient resolution of the whole path, on a tree
// with every kind of component: directories, a file, missing parts,
// symlinks inside and out, relative and absolute, dangling, a loop, and a
// root reached through a symlink.
func TestResolveUnderAgreesWithResolveLenient(t *testing.T) {
	base := t.TempDir()
	repo := filepath.Join(base, "repo")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{"repo/src/deep", "outside/x"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(repo, "src", "a.go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"repo/in":          "src",
		"repo/src/up":      "..",
		"repo/out":         "../outside",
		"repo/abs":         outside,
		"repo/gone":        "/nonexistent-rally-dir/deeper",
		"repo/gonein":      "src/new/deeper",
		"repo/loop1":       "loop2",
		"repo/loop2":       "loop1",
		"repo/src/deep/rl": "../../in/deep",
		"link-to-repo":     "repo",
	}
	for l, target := range links {
		if err := os.Symlink(target, filepath.Join(base, l)); err != nil {
			t.Fatal(err)
		}
	}
	rels := []string{".", "src", "src/a.go", "src/a.go/x", "src/new.go", "src/new/dir/f.go", "src/deep/f",
		"in", "in/a.go", "in/new/f.go", "src/up/src/a.go", "out", "out/x/f", "abs/x", "abs/new/f",
		"gone", "gone/x.go", "gonein", "gonein/f", "loop1", "loop1/x", "src/deep/rl/f", "new/in/f"}
	for _, root := range []string{repo, filepath.Join(base, "link-to-repo")} {
		realRoot, err := filepath.EvalSymlinks(root)
		if err != nil {
			t.Fatal(err)
		}
		for _, rel := range rels {
			want, werr := resolveLenient(filepath.Join(root, filepath.FromSlash(rel)), 0)
			got, gerr := resolveUnder(realRoot, rel)
			if got != want || (werr == nil) != (gerr == nil) {
				t.Errorf("root %s, %s: resolveUnder = %q, %v; resolveLenient = %q, %v", root, rel, got, gerr, want, werr)
			}
		}
	}
}
