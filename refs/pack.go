package refs

import (
	"os"
	"path/filepath"
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
// reports whether it started one. The pack runs `git repack -d -l
// --geometric=2`: loose objects go into a new pack, small packs roll up,
// the user's large packs stay as they are, and nothing unreachable is
// pruned.
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
	return GitBackground(st.CommonDir, PackArgs...) == nil
}

// PackArgs is the incremental pack rally runs.
var PackArgs = []string{"repack", "-d", "-q", "-l", "--geometric=2", "--no-write-bitmap-index"}

// Pack runs the incremental pack in the foreground.
func (st *Store) Pack() error {
	_, err := Git(st.CommonDir, nil, PackArgs...)
	return err
}
