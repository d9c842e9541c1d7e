package worktree

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/git-rally/git-rally/refs"
)

// Discovers counts Discover's calls (tests show a command discovers its
// repository once).
var Discovers atomic.Int64

// ErrNotRepo is returned outside a git repository.
var ErrNotRepo = errors.New("not a git repository (or any of the parent directories)")

// Repo locates one repository: the common dir every worktree shares (the
// room), this worktree's git dir and its top-level directory.
type Repo struct {
	CommonDir string      // absolute; the room
	GitDir    string      // this worktree's git dir
	WorkTree  string      // this worktree's top level; "" in a bare repository
	config    []byte      // <common dir>/config as Discover read it
	configFI  os.FileInfo // and what it was then
	// wtFrom is WorkTree as found, before its symlinks were resolved;
	// "" when WorkTree is not filepath.EvalSymlinks' answer.
	wtFrom string
}

// RealDir is filepath.EvalSymlinks(dir), answered without walking the
// path again when dir is the worktree's top level as Discover found it
// (a command run there resolves its directory once).
func (r *Repo) RealDir(dir string) (string, error) {
	if r.wtFrom != "" && dir == r.wtFrom {
		return r.WorkTree, nil
	}
	return filepath.EvalSymlinks(dir)
}

// WorkTreeIsReal reports whether WorkTree is free of symlinks
// (filepath.EvalSymlinks' answer), so that what resolves paths under it
// need not resolve it again.
func (r *Repo) WorkTreeIsReal() bool { return r.wtFrom != "" }

// Config returns the repository's config file as Discover read it, while
// it is still that file (one stat: git config replaces the file, and a
// command may set a key before it reads the configuration); nil when it
// changed or could not be read. A command that reads the configuration
// after Discover does not read the file again.
func (r *Repo) Config() []byte {
	if r.configFI == nil {
		return nil
	}
	fi, err := os.Stat(filepath.Join(r.CommonDir, "config"))
	if err != nil || !os.SameFile(fi, r.configFI) || fi.Size() != r.configFI.Size() || !fi.ModTime().Equal(r.configFI.ModTime()) {
		return nil
	}
	return r.config
}

// readWithInfo reads a file and returns what it was when read.
func readWithInfo(p string) ([]byte, os.FileInfo, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, 1<<26))
	return b, fi, err
}

// Discover finds the repository containing dir without running git: it
// walks up to a .git directory or gitdir file, then follows commondir. It
// honours GIT_DIR and GIT_WORK_TREE as git does.
func Discover(dir string) (*Repo, error) {
	Discovers.Add(1)
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if gd := os.Getenv("GIT_DIR"); gd != "" {
		if !filepath.IsAbs(gd) {
			gd = filepath.Join(dir, gd)
		}
		r := &Repo{GitDir: filepath.Clean(gd)}
		if wt := os.Getenv("GIT_WORK_TREE"); wt != "" {
			if !filepath.IsAbs(wt) {
				wt = filepath.Join(dir, wt)
			}
			r.WorkTree = filepath.Clean(wt)
		} else if filepath.Base(r.GitDir) == ".git" {
			r.WorkTree = filepath.Dir(r.GitDir)
		} else if top, ok := findTop(dir); ok {
			r.WorkTree = top
		}
		return r.finish()
	}
	for d := dir; ; d = filepath.Dir(d) {
		dotgit := filepath.Join(d, ".git")
		if fi, err := os.Stat(dotgit); err == nil {
			r := &Repo{WorkTree: d}
			if fi.IsDir() {
				r.GitDir = dotgit
			} else {
				b, err := os.ReadFile(dotgit)
				if err != nil {
					return nil, err
				}
				s := strings.TrimSpace(string(b))
				if !strings.HasPrefix(s, "gitdir:") {
					return nil, fmt.Errorf("%s: not a gitdir file", dotgit)
				}
				gd := strings.TrimSpace(strings.TrimPrefix(s, "gitdir:"))
				if !filepath.IsAbs(gd) {
					gd = filepath.Join(d, gd)
				}
				r.GitDir = filepath.Clean(gd)
			}
			return r.finish()
		}
		if isGitDir(d) {
			return (&Repo{GitDir: d}).finish()
		}
		if filepath.Dir(d) == d {
			return nil, ErrNotRepo
		}
	}
}

func findTop(dir string) (string, bool) {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d, true
		}
		if filepath.Dir(d) == d {
			return "", false
		}
	}
}

func isGitDir(d string) bool {
	for _, n := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Stat(filepath.Join(d, n)); err != nil {
			return false
		}
	}
	return true
}

func (r *Repo) finish() (*Repo, error) {
	if !isGitDir(r.GitDir) {
		if _, err := os.Stat(filepath.Join(r.GitDir, "commondir")); err != nil {
			return nil, ErrNotRepo
		}
	}
	r.CommonDir = r.GitDir
	if b, err := os.ReadFile(filepath.Join(r.GitDir, "commondir")); err == nil {
		cd := strings.TrimSpace(string(b))
		if !filepath.IsAbs(cd) {
			cd = filepath.Join(r.GitDir, cd)
		}
		r.CommonDir = filepath.Clean(cd)
	}
	from := r.WorkTree
	var ok bool
	r.CommonDir, r.WorkTree, ok = realDirs(r.CommonDir, r.WorkTree)
	if ok {
		r.wtFrom = from
	}
	refs.Opens.ConfigFile.Add(1)
	if b, fi, err := readWithInfo(filepath.Join(r.CommonDir, "config")); err == nil {
		r.config, r.configFI = b, fi
		low := strings.ToLower(string(b))
		if strings.Contains(low, "objectformat") && strings.Contains(low, "sha256") {
			return nil, fmt.Errorf("sha256 repositories are not supported yet")
		}
	}
	return r, nil
}

// realDirs resolves the common dir's and the worktree's symlinks (each
// kept as it is where it does not resolve; ok says the worktree did). In the usual layout, the
// common dir <worktree>/.git, a real directory, resolves to the resolved
// worktree's .git: one lstat, not a second walk of the path from /.
func realDirs(common, wt string) (string, string, bool) {
	realWT := ""
	if wt != "" {
		if real, err := filepath.EvalSymlinks(wt); err == nil {
			realWT = real
		}
	}
	switch {
	case realWT != "" && common == filepath.Join(wt, ".git"):
		dotgit := filepath.Join(realWT, ".git")
		if fi, err := os.Lstat(dotgit); err == nil && fi.IsDir() {
			common = dotgit
			break
		}
		fallthrough
	default:
		if real, err := filepath.EvalSymlinks(common); err == nil {
			common = real
		}
	}
	if realWT == "" {
		return common, wt, false
	}
	return common, realWT, true
}

// MainWorkTree returns the main checkout of the repository, or "" for a
// bare repository.
func (r *Repo) MainWorkTree() string {
	if filepath.Base(r.CommonDir) == ".git" {
		return filepath.Dir(r.CommonDir)
	}
	return ""
}

// RallyDir is where machine-local state lives: <common dir>/rally.
func (r *Repo) RallyDir() string { return filepath.Join(r.CommonDir, "rally") }

// SessionName returns the rally session bound to the current worktree: the
// name of <main checkout>/.rally/worktrees/<name>, or "".
func SessionName(r *Repo) string {
	main := r.MainWorkTree()
	if main == "" || r.WorkTree == "" || r.WorkTree == main {
		return ""
	}
	rel, err := filepath.Rel(filepath.Join(main, ".rally", "worktrees"), r.WorkTree)
	if err != nil || strings.HasPrefix(rel, "..") || strings.Contains(rel, string(filepath.Separator)) {
		return ""
	}
	return rel
}
