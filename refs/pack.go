package refs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// MaybePack packs when the loose objects pass PackLooseObjects and no
// pack was started in the last minute. It reports whether it started
// one. It first puts the ledger's new objects into a pack of their own,
// stored without compression (see ledgerRef), in the foreground (git
// pack-objects of the commits since the last pack), then starts `git
// repack -d -l --geometric=2` in the background: the other loose objects
// go into a new pack, compressed as git compresses them, small packs roll
// up (their objects copied as they are), the user's large packs stay as
// they are, the loose copies are removed, and nothing unreachable is
// pruned. An error leaves the loose objects as they are (nothing is lost)
// and is returned.
func (st *Store) MaybePack() (bool, error) {
	if st.LooseEstimate() < packLoose {
		return false, nil
	}
	stamp := filepath.Join(st.CommonDir, "rally", "pack.stamp")
	if fi, err := os.Stat(stamp); err == nil && time.Since(fi.ModTime()) < packEvery {
		return false, nil
	}
	if err := os.WriteFile(stamp, []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o666); err != nil {
		return false, fmt.Errorf("pack: %w", err)
	}
	if err := st.packLedger(); err != nil {
		return false, err
	}
	if err := startPack(st.CommonDir, PackArgs...); err != nil {
		return false, err
	}
	return true, nil
}

// packLoose is PackLooseObjects; startPack starts the repack (startGit).
// Tests change them.
var (
	packLoose = PackLooseObjects
	startPack = startGit
)

// PackArgs is the incremental pack rally runs.
var PackArgs = []string{"repack", "-d", "-q", "-l", "--geometric=2", "--no-write-bitmap-index"}

// Pack runs the incremental pack in the foreground.
func (st *Store) Pack() error {
	if err := st.packLedger(); err != nil {
		return err
	}
	_, err := Git(st.CommonDir, nil, PackArgs...)
	return err
}

// packLedger packs the ledger's objects not yet packed, stored, and notes
// the head it packed once its pack is written.
func (st *Store) packLedger() error {
	revs, ok := st.ledgerPackRevs()
	if !ok {
		return nil
	}
	in := strings.Join(revs, "\n") + "\n"
	if _, err := GitInput(st.CommonDir, nil, []byte(in), append(ledgerPackArgs, st.packBase())...); err != nil {
		return err
	}
	note := st.packedNote()
	if err := os.WriteFile(note+".tmp", []byte(revs[0]+"\n"), 0o666); err != nil {
		return fmt.Errorf("noting the ledger's pack: %w", err)
	}
	if err := os.Rename(note+".tmp", note); err != nil {
		return fmt.Errorf("noting the ledger's pack: %w", err)
	}
	return nil
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

// IndexBytes is the size of the repository's pack indexes: what a git
// that looks objects up may map and touch of them.
func (st *Store) IndexBytes() int64 {
	idx, _ := filepath.Glob(filepath.Join(st.CommonDir, "objects", "pack", "*.idx"))
	var n int64
	for _, p := range idx {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return n
}
