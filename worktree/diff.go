package worktree

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// MaxDiffBytes caps the diff text a BranchDiff carries; the file list is
// always complete.
const MaxDiffBytes = 1 << 20

// FileChange is one file a branch changes: lines added and removed
// (Binary: git counts no lines).
type FileChange struct {
	Path           string
	Added, Removed int
	Binary         bool
}

// BranchDiff is what one agent branch changes against its base, and the
// conflicts predicted with every other live branch (SPEC §16).
type BranchDiff struct {
	Branch, Base, BaseHead string
	Revision               string // the branch's commit: what a review reviews
	Files                  []FileChange
	Diff                   string
	Truncated              bool   // Diff stops at MaxDiffBytes
	Conflicts              []Pair // A is Branch
}

// BranchHead is one branch under refs/heads/rally/ and its commit.
type BranchHead struct{ Branch, Head string }

// RallyBranches lists the rally/* branches and their commits, sorted by
// name. It reads git's ref files itself (a commit's hook runs it: a
// process less); a repository whose refs it cannot read that way (reftable,
// a symbolic ref) is asked with one git process.
func (r *Repo) RallyBranches() ([]BranchHead, error) {
	if bs, ok := r.readRallyRefs(); ok {
		return bs, nil
	}
	out, err := r.git("for-each-ref", "--format=%(refname)%00%(objectname)", "refs/heads/"+BranchPrefix)
	if err != nil {
		return nil, err
	}
	var bs []BranchHead
	for _, line := range strings.Split(out, "\n") {
		ref, head, ok := strings.Cut(line, "\x00")
		if ok {
			bs = append(bs, BranchHead{strings.TrimPrefix(ref, "refs/heads/"), head})
		}
	}
	return bs, nil
}

// readRallyRefs reads refs/heads/rally/* from the loose ref files and
// packed-refs, as git does (a loose ref wins over its packed entry); ok is
// false when the repository keeps refs otherwise or a ref is not a plain
// object id.
func (r *Repo) readRallyRefs() (bs []BranchHead, ok bool) {
	if _, err := os.Stat(filepath.Join(r.CommonDir, "reftable")); err == nil {
		return nil, false
	}
	heads := map[string]string{}
	prefix := "refs/heads/" + BranchPrefix
	if b, err := os.ReadFile(filepath.Join(r.CommonDir, "packed-refs")); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			id, ref, found := strings.Cut(line, " ")
			if found && strings.HasPrefix(ref, prefix) && isObjectID(id) {
				heads[ref] = id
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	root := filepath.Join(r.CommonDir, filepath.FromSlash(prefix))
	bad := false
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == root {
				return nil
			}
			return err
		}
		if d.IsDir() || strings.HasSuffix(p, ".lock") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		id := strings.TrimSpace(string(b))
		if !isObjectID(id) {
			bad = true
			return fs.SkipAll
		}
		rel, _ := filepath.Rel(root, p)
		heads[prefix+filepath.ToSlash(rel)] = id
		return nil
	})
	if err != nil || bad {
		return nil, false
	}
	for ref, id := range heads {
		bs = append(bs, BranchHead{strings.TrimPrefix(ref, "refs/heads/"), id})
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].Branch < bs[j].Branch })
	return bs, true
}

func isObjectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// ConflictsWith predicts merging head (the commit of branch) with every
// other branch in others that live accepts (nil: all), with one
// merge-tree process, read-only as Plan is: the trees it writes go to a
// throw-away object directory. Only the predicted conflicts are returned,
// files sorted.
func (r *Repo) ConflictsWith(branch, head string, others []BranchHead, live func(branch string) bool) ([]Pair, error) {
	var ms []merge
	var with []string
	for _, o := range others {
		if o.Branch == branch || o.Head == head || (live != nil && !live(o.Branch)) {
			continue
		}
		ms = append(ms, merge{head, o.Head})
		with = append(with, o.Branch)
	}
	res, err := r.predictMerges(ms)
	if err != nil {
		return nil, err
	}
	var out []Pair
	for i, m := range res {
		if !m.Clean {
			out = append(out, Pair{A: branch, B: with[i], Files: sortedSet(m.Conflicts)})
		}
	}
	return out, nil
}

// ConflictsAmong predicts the merge of every pair of the branches live
// accepts, with one merge-tree process: what a watcher of the branches
// checks when one moved without a hook to tell (serve). Only the predicted
// conflicts are returned, A before B by name.
func (r *Repo) ConflictsAmong(bs []BranchHead, live func(branch string) bool) ([]Pair, error) {
	var in []BranchHead
	for _, b := range bs {
		if live == nil || live(b.Branch) {
			in = append(in, b)
		}
	}
	var ms []merge
	var pairs [][2]string
	for i := range in {
		for j := i + 1; j < len(in); j++ {
			if in[i].Head != in[j].Head {
				ms = append(ms, merge{in[i].Head, in[j].Head})
				pairs = append(pairs, [2]string{in[i].Branch, in[j].Branch})
			}
		}
	}
	res, err := r.predictMerges(ms)
	if err != nil {
		return nil, err
	}
	var out []Pair
	for k, m := range res {
		if !m.Clean {
			out = append(out, Pair{A: pairs[k][0], B: pairs[k][1], Files: sortedSet(m.Conflicts)})
		}
	}
	return out, nil
}

// Diff reports what branch (a rally/* branch) changes since its merge base
// with base ("" = DefaultBase): the files with lines added and removed and
// the diff itself, in one git process, and the conflicts predicted with
// every other rally/* branch live accepts. It changes nothing.
func (r *Repo) Diff(branch, base string, live func(branch string) bool) (*BranchDiff, error) {
	if !strings.HasPrefix(branch, BranchPrefix) || CheckName(strings.TrimPrefix(branch, BranchPrefix)) != nil {
		return nil, &facts.UsageError{Msg: fmt.Sprintf("branch %q is not an agent branch (rally/<name>)", branch), Hint: "git rally worktree list"}
	}
	all, err := r.RallyBranches()
	if err != nil {
		return nil, err
	}
	d := &BranchDiff{Branch: branch, Base: base}
	for _, b := range all {
		if b.Branch == branch {
			d.Revision = b.Head
		}
	}
	if d.Revision == "" {
		return nil, &facts.UsageError{Msg: fmt.Sprintf("no branch %s", branch), Hint: "git rally worktree list"}
	}
	if d.Base == "" {
		if d.Base, err = r.DefaultBase(); err != nil {
			return nil, err
		}
	}
	if d.BaseHead, err = r.Commit(d.Base); err != nil {
		return nil, err
	}
	args := []string{"diff", "--no-color", "--no-ext-diff", "--no-renames", "--numstat", "-z", "-p"}
	out, err := r.git(append(args, d.BaseHead+"..."+d.Revision, "--")...)
	if err != nil {
		var ge *refs.GitError
		if !errors.As(err, &ge) || !strings.Contains(ge.Stderr, "merge base") {
			return nil, err
		}
		if out, err = r.git(append(args, emptyTree, d.Revision, "--")...); err != nil {
			return nil, err
		}
	}
	d.Files, d.Diff = parseNumstatPatch(out)
	if len(d.Diff) > MaxDiffBytes {
		cut := strings.LastIndexByte(d.Diff[:MaxDiffBytes], '\n')
		d.Diff, d.Truncated = d.Diff[:cut+1], true
	}
	if d.Conflicts, err = r.ConflictsWith(branch, d.Revision, all, live); err != nil {
		return nil, err
	}
	return d, nil
}

// parseNumstatPatch splits `git diff --numstat -z -p`: NUL-ended
// "added<TAB>removed<TAB>path" records, an empty record, then the patch.
func parseNumstatPatch(out string) ([]FileChange, string) {
	var files []FileChange
	for out != "" {
		if out[0] == 0 {
			return files, out[1:]
		}
		rec, rest, ok := strings.Cut(out, "\x00")
		if !ok {
			break
		}
		out = rest
		a, tail, _ := strings.Cut(rec, "\t")
		rm, path, _ := strings.Cut(tail, "\t")
		fc := FileChange{Path: path}
		if a == "-" && rm == "-" {
			fc.Binary = true
		} else {
			fc.Added, _ = strconv.Atoi(a)
			fc.Removed, _ = strconv.Atoi(rm)
		}
		files = append(files, fc)
	}
	return files, out
}

// BranchStamp changes when a rally/* branch is made, moves or goes: the
// loose refs under refs/heads/rally/ (names and contents) and the
// packed-refs file's size and time. It starts no process, so a page can
// ask it often.
func (r *Repo) BranchStamp() string {
	var b strings.Builder
	root := filepath.Join(r.CommonDir, "refs", "heads", strings.TrimSuffix(BranchPrefix, "/"))
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if c, err := os.ReadFile(p); err == nil {
			b.WriteString(p[len(root):] + "=" + strings.TrimSpace(string(c)) + "\n")
		}
		return nil
	})
	if fi, err := os.Stat(filepath.Join(r.CommonDir, "packed-refs")); err == nil {
		fmt.Fprintf(&b, "packed %d %d\n", fi.Size(), fi.ModTime().UnixNano())
	}
	return b.String()
}
