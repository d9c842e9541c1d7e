package worktree

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// Inspection is what removing an agent worktree would drop.
type Inspection struct {
	Name, Path, Branch string
	Head               string   // the branch's commit; "" when there is no branch
	Registered         bool     // git has a worktree at Path
	Exists             bool     // Path exists on disk
	Dirty              []string // `git status --porcelain` entries
	Base               string   // the branch the work must be merged into
	Merged             bool     // nothing on Branch is missing from Base
	Unmerged           int      // commits of Branch not in Base
}

// Inspect looks at the worktree <name> and its branch. base is the branch
// work merges into ("" = DefaultBase); start is the commit the worktree
// was created from ("" when unknown): a branch still there holds no work.
func (r *Repo) Inspect(name, base, start string) (*Inspection, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	path, err := r.Path(name)
	if err != nil {
		return nil, err
	}
	in := &Inspection{Name: name, Path: path, Branch: BranchPrefix + name}
	if _, err := os.Lstat(path); err == nil {
		in.Exists = true
	}
	wts, err := r.Worktrees()
	if err != nil {
		return nil, err
	}
	for _, w := range wts {
		if w.Path == realPath(path) || w.Path == path {
			in.Registered = true
		}
	}
	if in.Head, err = r.branchHead(in.Branch); err != nil {
		return nil, err
	}
	if in.Registered && in.Exists {
		if in.Dirty, err = Dirty(path); err != nil {
			return nil, err
		}
	}
	if in.Head == "" || in.Head == start {
		in.Merged = true
		return in, nil
	}
	in.Base = base
	if in.Base == "" {
		if in.Base, err = r.DefaultBase(); err != nil {
			in.Base = ""
			in.Unmerged = -1
			return in, nil // unknown: treated as unmerged
		}
	}
	baseHead, err := r.Commit(in.Base)
	if err != nil {
		return nil, err
	}
	if in.Merged, err = r.integrated(baseHead, in.Head); err != nil {
		return nil, err
	}
	if !in.Merged {
		out, err := r.git("rev-list", "--count", baseHead+".."+in.Head)
		if err != nil {
			return nil, err
		}
		in.Unmerged, _ = strconv.Atoi(trim(out))
	}
	return in, nil
}

// integrated reports whether head's work is all in base: head is an
// ancestor of base, or merging it into base would change nothing (a squash
// or a cherry-pick brought the same changes).
func (r *Repo) integrated(base, head string) (bool, error) {
	_, err := r.git("merge-base", "--is-ancestor", head, base)
	if err == nil {
		return true, nil
	}
	var ge *refs.GitError
	if !errors.As(err, &ge) || ge.Code != 1 {
		return false, err
	}
	res, err := r.predictMerges([]merge{{base, head}})
	if err != nil {
		return false, err
	}
	if !res[0].Clean {
		return false, nil
	}
	tree, err := r.git("rev-parse", base+"^{tree}")
	if err != nil {
		return false, err
	}
	return trim(tree) == res[0].Tree, nil
}

// Removal is what Remove did.
type Removal struct {
	*Inspection
	RemovedWorktree bool
	DeletedBranch   bool
	KeptBranch      string // why the branch was kept; "" when deleted or absent
	Dropped         []string
}

// Remove removes the worktree <name> and, when its work is merged, its
// branch. Without force it refuses a worktree with uncommitted, untracked
// or unmerged work. With force it drops uncommitted work but still keeps an
// unmerged branch, so no commit is ever lost.
func (r *Repo) Remove(name string, force bool, base, start string) (*Removal, error) {
	q, err := refs.QueueLock(r.CommonDir, queueName)
	if err != nil {
		return nil, err
	}
	defer refs.UnlockQueue(q)
	in, err := r.Inspect(name, base, start)
	if err != nil {
		return nil, err
	}
	if !in.Registered && !in.Exists && in.Head == "" {
		return nil, &facts.UsageError{Msg: fmt.Sprintf("no such worktree: %q", name), Hint: "git rally worktree list"}
	}
	if in.Exists && !in.Registered {
		return nil, &facts.RefusedError{Msg: fmt.Sprintf("%s is not a registered git worktree; rally does not delete what it did not make", in.Path),
			Hint: "look inside, then remove it by hand"}
	}
	if r.WorkTree != "" && in.Exists && realPath(r.WorkTree) == realPath(in.Path) {
		return nil, &facts.UsageError{Msg: fmt.Sprintf("you are inside worktree %s; remove it from another worktree", name),
			Hint: fmt.Sprintf("git -C %s rally worktree remove %s", r.MainWorkTree(), name)}
	}
	if !force && (len(in.Dirty) > 0 || !in.Merged) {
		return nil, refusal(in)
	}
	rm := &Removal{Inspection: in}
	if in.Registered {
		args := []string{"worktree", "remove"}
		if force || !in.Exists {
			args = append(args, "--force")
		}
		if _, err := r.git(append(args, in.Path)...); err != nil {
			return nil, err
		}
		rm.RemovedWorktree = true
		rm.Dropped = in.Dirty
	}
	switch {
	case in.Head == "":
	case !in.Merged:
		rm.KeptBranch = unmergedText(in)
	default:
		if _, err := r.git("branch", "-D", in.Branch); err != nil {
			rm.KeptBranch = err.Error()
		} else {
			rm.DeletedBranch = true
		}
	}
	return rm, nil
}

func unmergedText(in *Inspection) string {
	if in.Unmerged < 0 {
		return fmt.Sprintf("%s may hold work: no base branch to compare with", in.Branch)
	}
	return fmt.Sprintf("%s has %d commit(s) not merged into %s", in.Branch, in.Unmerged, in.Base)
}

func refusal(in *Inspection) error {
	var why []string
	if n := len(in.Dirty); n > 0 {
		show := in.Dirty
		if len(show) > 5 {
			show = show[:5]
		}
		more := ""
		if n > len(show) {
			more = fmt.Sprintf(", and %d more", n-len(show))
		}
		why = append(why, fmt.Sprintf("%d uncommitted or untracked path(s) (%s%s)", n, strings.Join(show, ", "), more))
	}
	if !in.Merged {
		why = append(why, unmergedText(in))
	}
	var hint string
	switch {
	case len(in.Dirty) > 0 && !in.Merged:
		hint = fmt.Sprintf("commit in %s, then merge: git merge %s (see git rally worktree plan)", in.Path, in.Branch)
	case len(in.Dirty) > 0:
		hint = fmt.Sprintf("commit or discard the changes in %s", in.Path)
	default:
		hint = fmt.Sprintf("merge it first: git merge %s (see git rally worktree plan)", in.Branch)
	}
	return &facts.RefusedError{
		Msg:  fmt.Sprintf("refusing to remove worktree %s: %s", in.Name, strings.Join(why, "; ")),
		Hint: hint + "\n" + fmt.Sprintf("git rally worktree remove %s --force drops uncommitted work (an unmerged branch is kept)", in.Name),
	}
}
