package refs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Every append writes a handful of loose objects; 100k facts would be
// 700k files (2.8 GB on disk), and a push of thousands of loose objects is
// slow. Rally therefore packs them itself, incrementally, in the
// background, before git's own gc --auto would start a full repack.
const (
	// PackLooseObjects is the estimated number of loose objects that
	// triggers a background pack (git gc --auto's default is 6700).
	PackLooseObjects = 4096
	// packEvery is the least time between two triggers.
	packEvery = time.Minute
)

// LooseEstimate estimates the loose objects the way git gc --auto does:
// the objects in the objects/17 fan-out directory, times 256.
func (st *Store) LooseEstimate() int {
	ents, err := os.ReadDir(filepath.Join(st.CommonDir, "objects", "17"))
	if err != nil {
		return 0
	}
	return len(ents) * 256
}

// MaybePack starts a background incremental pack when the loose objects
// pass PackLooseObjects and no pack was started in the last minute. It
// reports whether it started one. The pack first puts the ledger's new
// objects into a pack of their own, stored without compression (see
// ledgerRef), then runs `git repack -d -l --geometric=2`: the other loose
// objects go into a new pack, compressed as git compresses them, small
// packs roll up (their objects copied as they are), the user's large packs
// stay as they are, the loose copies are removed, and nothing unreachable
// is pruned.
func (st *Store) MaybePack() bool {
	if st.LooseEstimate() < PackLooseObjects {
		return false
	}
	stamp := filepath.Join(st.CommonDir, "rally", "pack.stamp")
	if fi, err := os.Stat(stamp); err == nil && time.Since(fi.ModTime()) < packEvery {
		return false
	}
	if err := os.WriteFile(stamp, []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o666); err != nil {
		return false
	}
	countGit()
	cmd := st.packCommand()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return false
	}
	return cmd.Process.Release() == nil
}

// packCommand is the pack MaybePack starts: sh running the ledger's pack
// and then the repack, or the repack alone when the ledger has nothing
// new. The ledger head packed is noted only when its pack was written.
func (st *Store) packCommand() *exec.Cmd {
	revs, ok := st.ledgerPackRevs()
	if !ok {
		cmd := exec.Command("git", PackArgs...)
		cmd.Dir = st.CommonDir
		return cmd
	}
	script := `printf '%s\n' "$1" $2 | git ` + strings.Join(ledgerPackArgs, " ") + ` "$3" >/dev/null &&
printf '%s\n' "$1" >"$4.tmp" && mv -f "$4.tmp" "$4"
shift 4
exec git "$@"`
	cmd := exec.Command("sh", append([]string{"-c", script, "sh", revs[0], strings.Join(revs[1:], " "), st.packBase(), st.packedNote()}, PackArgs...)...)
	cmd.Dir = st.CommonDir
	return cmd
}

// PackArgs is the incremental pack rally runs.
var PackArgs = []string{"repack", "-d", "-q", "-l", "--geometric=2", "--no-write-bitmap-index"}

// Pack runs the incremental pack in the foreground.
func (st *Store) Pack() error {
	if revs, ok := st.ledgerPackRevs(); ok {
		in := strings.Join(revs, "\n") + "\n"
		if _, err := GitInput(st.CommonDir, nil, []byte(in), append(ledgerPackArgs, st.packBase())...); err != nil {
			return err
		}
		os.WriteFile(st.packedNote()+".tmp", []byte(revs[0]+"\n"), 0o666)
		os.Rename(st.packedNote()+".tmp", st.packedNote())
	}
	_, err := Git(st.CommonDir, nil, PackArgs...)
	return err
}

// The ledger's objects are packed stored, without compression (zlib
// level 0, as rally writes them loose: core.looseCompression=0). They are
// small JSON lines and trees of ids that deflate saves little on (a 100k
// fact ledger's pack: 32 MB stored, 29 MB deflated), while inflating them
// was most of git's work in a cold rebuild (cat-file and ls-tree of 100k
// facts: 3.6 G instructions deflated, 1.2 G stored). git copies packed
// objects as they are when it repacks (only `repack -F` compresses them
// again), so they stay stored through the rollup and the user's gc. Only
// objects reachable from the ledger and not yet packed are packed this
// way; the user's own objects are left to the repack that follows, which
// compresses them as git does.
const ledgerRef = "refs/rally/ledger"

var ledgerPackArgs = []string{"pack-objects", "--revs", "--unpacked", "--local", "--compression=0", "-q"}

// ledgerPackRevs returns what pack-objects --revs reads to pack the
// ledger's new objects: its head, and the head packed last time (noted in
// rally/packed-ledger) as the boundary, so that only the commits since
// are walked. It reports false when there is nothing to pack.
func (st *Store) ledgerPackRevs() ([]string, bool) {
	head, err := st.ReadRef(ledgerRef)
	if err != nil || head.IsZero() {
		return nil, false
	}
	revs := []string{head.String()}
	if b, err := os.ReadFile(st.packedNote()); err == nil {
		if last, err := ParseHash(strings.TrimSpace(string(b))); err == nil && st.HasObject(last) {
			if last == head {
				return nil, false
			}
			revs = append(revs, "^"+last.String())
		}
	}
	return revs, true
}

func (st *Store) packBase() string { return filepath.Join(st.CommonDir, "objects", "pack", "pack") }

func (st *Store) packedNote() string { return filepath.Join(st.CommonDir, "rally", "packed-ledger") }
