package refs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Fetch and push go through the git command line, not go-git: git honours
// the user's credential helpers, the whole of ~/.ssh/config, insteadOf,
// proxies and GIT_SSH_COMMAND, and its push is several times faster.

// Remotes lists the configured remote names.
func Remotes(dir string) ([]string, error) {
	out, err := Git(dir, nil, "remote")
	if err != nil {
		return nil, err
	}
	return strings.Fields(out), nil
}

// Fetch runs `git fetch --prune <remote> <refspec>`. A wildcard refspec
// makes a remote without the ref an empty fetch instead of an error, and
// --prune drops the tracking ref of a ref the remote no longer has. It
// leaves FETCH_HEAD alone (the user's, not ours); auto-gc stays as the
// user configured it, as for any fetch; blobs over MaxBlob are streamed. With progress, git's progress is
// copied there.
func Fetch(dir, remote, refspec string, progress io.Writer) error {
	// core.bigFileThreshold: git streams a blob over rally's read limit
	// to disk instead of holding it (a hostile remote's 200 MiB fact line
	// cost the fetch 200 MiB); rally never reads such a blob anyway.
	args := []string{"-c", "core.bigFileThreshold=" + strconv.Itoa(MaxBlob), "fetch", "--prune", "--no-write-fetch-head", "--no-tags", "--no-recurse-submodules"}
	if progress != nil {
		args = append(args, "--progress")
	} else {
		args = append(args, "--quiet")
	}
	args = append(args, remote, refspec)
	_, err := GitProgress(dir, nil, progress, args...)
	return err
}

// PushStatus is what git push said about one ref.
type PushStatus int

const (
	// Pushed: the remote ref now has the value.
	Pushed PushStatus = iota
	// UpToDate: the remote ref already had it.
	UpToDate
	// Rejected: the remote ref moved on (non-fast-forward, fetch first);
	// fetch, merge and push again.
	Rejected
	// RemoteRejected: the remote refused the ref (a hook, a rule, a
	// forge that does not take custom refs); retrying does not help.
	RemoteRejected
)

// PushResult is the outcome of a push of one ref.
type PushResult struct {
	Status PushStatus
	// Summary is git's word for it, e.g. "[rejected] (fetch first)".
	Summary string
	// Detail is the error git (or the remote, through git) printed beside
	// a rejection, e.g. "cannot lock ref 'refs/rally/ledger': Unable to
	// create '.../ledger.lock': File exists."; empty when it said none.
	Detail string
}

// Push runs `git push --porcelain <remote> <src>:<dst>` without force and
// without the user's pre-push hook (the hook guards their code, not the
// ledger). A rejected update is a result, not an error.
func Push(dir, remote, src, dst string, progress io.Writer) (PushResult, error) {
	return PushAlso(dir, remote, src, dst, nil, progress)
}

// PushRefspecs pushes refspecs as they are (a checkpoint's forced
// update), quietly; the caller decides what a failure means.
func PushRefspecs(dir, remote string, specs []string) error {
	args := append(PackWindows(), "push", "--porcelain", "--no-verify", "--quiet", remote)
	_, err := Git(dir, nil, append(args, specs...)...)
	return err
}

// PushAlso is Push with more refspecs in the same git push (checkpoints
// beside the ledger: no second connection); the result is dst's.
func PushAlso(dir, remote, src, dst string, also []string, progress io.Writer) (PushResult, error) {
	args := append(PackWindows(), "push", "--porcelain", "--no-verify")
	if progress != nil {
		args = append(args, "--progress")
	}
	args = append(args, remote, src+":"+dst)
	args = append(args, also...)
	out, err := GitProgress(dir, nil, progress, args...)
	if r, ok := parsePush(out, dst); ok {
		var ge *GitError
		if r.Status >= Rejected && errors.As(err, &ge) {
			r.Detail = pushDetail(ge.Stderr)
		}
		return r, nil
	}
	if err != nil {
		return PushResult{}, err
	}
	return PushResult{}, fmt.Errorf("git push %s: no status for %s in its output", remote, dst)
}

// ConnectionLost reports a git fetch or push that failed because its
// connection broke mid-way (a server that reset it, a receive-pack that
// died): another attempt may pass. A remote that cannot be reached at
// all, or that refuses, is not this.
func ConnectionLost(err error) bool {
	var ge *GitError
	if !errors.As(err, &ge) {
		return false
	}
	for _, s := range []string{"the remote end hung up unexpectedly", "unexpected disconnect", "Connection reset by peer", "Broken pipe", "early EOF"} {
		if strings.Contains(ge.Stderr, s) {
			return true
		}
	}
	return false
}

// parsePush reads git push --porcelain's line for dst:
// <flag> TAB <from>:<to> TAB <summary> [(<reason>)].
func parsePush(out, dst string) (PushResult, bool) {
	for _, line := range strings.Split(out, "\n") {
		parts := strings.SplitN(line, "\t", 3)
		if len(parts) != 3 || !strings.HasSuffix(parts[1], ":"+dst) || len(parts[0]) != 1 {
			continue
		}
		r := PushResult{Summary: parts[2]}
		switch parts[0] {
		case "=":
			r.Status = UpToDate
		case "!":
			r.Status = Rejected
			if (strings.HasPrefix(parts[2], "[remote rejected]") || strings.HasPrefix(parts[2], "[remote failure]")) &&
				!lockContention(parts[2]) {
				r.Status = RemoteRejected
			}
		default: // " " fast-forward, "*" new, "+" forced
			r.Status = Pushed
		}
		return r, true
	}
	return PushResult{}, false
}

// pushDetail picks the error lines out of git push's stderr, leaving out
// the generic "failed to push some refs" and the remote's advice.
func pushDetail(stderr string) string {
	var out []string
	for _, line := range strings.Split(stderr, "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "remote:"))
		if strings.HasPrefix(line, "error: failed to push some refs") {
			continue
		}
		if msg, ok := strings.CutPrefix(line, "error:"); ok {
			out = append(out, strings.TrimSpace(msg))
		}
	}
	return strings.Join(out, "; ")
}

// lockContention reports a remote refusal that only means another push
// held the ref at that moment (receive-pack could not lock or update it);
// a later attempt may pass.
func lockContention(summary string) bool {
	for _, s := range []string{"failed to update ref", "cannot lock ref", "failed to lock", "incorrect old value"} {
		if strings.Contains(summary, s) {
			return true
		}
	}
	return false
}

// UpdateRef sets a ref that only rally writes (a remote-tracking ledger)
// with git's lockfile protocol.
func (st *Store) UpdateRef(name string, h Hash) error {
	if h.IsZero() {
		return fmt.Errorf("updating %s: no value", name)
	}
	p := filepath.Join(st.CommonDir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
		return fmt.Errorf("updating %s: %w", name, err)
	}
	f, err := os.OpenFile(p+".lock", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("updating %s: %s.lock exists; another git process is updating it", name, name)
	}
	if err != nil {
		return fmt.Errorf("updating %s: %w", name, err)
	}
	_, err = f.WriteString(h.String() + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(p+".lock", p)
	}
	if err != nil {
		os.Remove(p + ".lock")
		return fmt.Errorf("updating %s: %w", name, err)
	}
	return nil
}
