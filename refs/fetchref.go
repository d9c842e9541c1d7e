package refs

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A `git fetch` killed while it updates a ref leaves git's <ref>.lock
// behind, and every later fetch of that ref fails on it; nothing proves
// whether a git process still holds such a lock. So rally's fetch never
// writes the shared tracking ref: git fetches into a ref of this process's
// own (refs/rally-fetch/<remote>/<pid>.<start>.<boot>/..., with --refmap=
// so no configured refspec touches the tracking ref either), and rally
// moves the tracking ref itself with LockRef, whose locks it can prove its
// own. What a killed fetch leaves lies under a name that says which process
// made it, and is removed once that process is gone.

// FetchPrefix is where rally's fetches land before the tracking ref moves.
const FetchPrefix = "refs/rally-fetch/"

// FetchTracking fetches the remote's ref src (an exact ref under
// refs/rally/) and sets the local ref dst to it, or deletes dst when the
// remote has no src (as --prune would). It returns dst's new value.
func (st *Store) FetchTracking(dir, remote, src, dst string, progress io.Writer) (Hash, error) {
	st.SweepFetches(remote)
	self := processID(os.Getpid())
	private := FetchPrefix + remote + "/" + fmt.Sprintf("%d.%s.%s", os.Getpid(), self.start, self.boot)
	pdir := filepath.Join(st.CommonDir, filepath.FromSlash(private))
	defer os.RemoveAll(pdir)
	base, name := path2(src)
	// In pack windows: its connectivity check (rev-list --objects of the
	// new commits, --not every ref) marks the whole tree of the ledger
	// head it had; at a million facts that mapped and touched most of
	// the pack, 236 MiB of RSS with git's defaults, 136 MiB with these.
	args := append(PackWindows(), "fetch", "--refmap=", "--no-write-fetch-head", "--no-tags", "--no-recurse-submodules")
	if progress != nil {
		args = append(args, "--progress")
	} else {
		args = append(args, "--quiet")
	}
	// A pattern: a remote with no ledger yet is an empty fetch, not an
	// error.
	args = append(args, remote, "+"+base+"/*:"+private+"/*")
	if _, err := GitProgress(dir, nil, progress, args...); err != nil {
		return ZeroHash, err
	}
	copyCheckpoints(st, private, dst)
	theirs, err := readRef(st.CommonDir, private+"/"+name)
	if err != nil {
		return ZeroHash, err
	}
	old, err := st.ReadRef(dst)
	if err != nil {
		return ZeroHash, err
	}
	if theirs == old {
		return theirs, nil
	}
	if theirs.IsZero() {
		if _, err := Git(dir, nil, "update-ref", "-d", dst, old.String()); err != nil {
			return ZeroHash, fmt.Errorf("removing %s (the remote has no ledger): %w", dst, err)
		}
		return ZeroHash, nil
	}
	l, err := st.LockRef(dst)
	if err != nil {
		return ZeroHash, err
	}
	defer l.Unlock()
	if err := l.Commit(theirs); err != nil {
		return ZeroHash, err
	}
	return theirs, nil
}

// path2 splits refs/rally/ledger into refs/rally and ledger.
func path2(ref string) (string, string) {
	i := strings.LastIndexByte(ref, '/')
	return ref[:i], ref[i+1:]
}

// SweepFetches removes what fetches of remote left under FetchPrefix when
// the process that ran them is gone (a killed sync): their refs and git's
// lock files. A live fetch's are left alone.
func (st *Store) SweepFetches(remote string) []string {
	dir := filepath.Join(st.CommonDir, filepath.FromSlash(FetchPrefix+remote))
	ents, _ := os.ReadDir(dir)
	var removed []string
	for _, e := range ents {
		parts := strings.SplitN(e.Name(), ".", 3)
		if len(parts) != 3 {
			continue
		}
		pid, err := strconv.Atoi(parts[0])
		if err != nil || processAlive(pid, parts[1], parts[2]) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if os.RemoveAll(p) == nil {
			removed = append(removed, p)
		}
	}
	return removed
}

// TrackingLocks lists the lock files under refs/rally-remotes/: git's, of
// a plain `git fetch` that runs or was killed (rally's fetches do not lock
// there, see FetchTracking), or rally's own.
func (st *Store) TrackingLocks() []string {
	ms, _ := filepath.Glob(filepath.Join(st.CommonDir, "refs", "rally-remotes", "*", "*.lock"))
	return ms
}

// copyCheckpoints keeps the signed checkpoints the fetch brought
// (<private>/checkpoints/*) beside the tracking ref dst
// (refs/rally-remotes/<remote>/checkpoints/*), where a reader that trusts
// their signer finds them. They are only ever believed after their
// signature is checked, so a failure here costs speed, not truth.
func copyCheckpoints(st *Store, private, dst string) {
	base, _ := path2(dst)
	for name, h := range st.RefsMatching(private + "/checkpoints/*") {
		to := base + "/checkpoints/" + name[len(private+"/checkpoints/"):]
		if old, err := readRef(st.CommonDir, to); err == nil && old == h {
			continue
		}
		_ = st.UpdateRef(to, h)
	}
}
