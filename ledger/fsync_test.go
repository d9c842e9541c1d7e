package ledger

import (
	"path/filepath"
	"testing"

	"github.com/git-rally/git-rally/refs"
)

// An append fsyncs what git's core.fsync says git would: by default
// nothing, with core.fsync=committed the objects and the ref.
func TestOpenReadsCoreFsync(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	if _, err := refs.Git(dir, nil, "init", "-q", "."); err != nil {
		t.Fatal(err)
	}
	common := filepath.Join(dir, ".git")
	open := func() refs.Fsync {
		l, err := Open(common, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return l.Store.Fsync
	}
	if got := open(); got.Refs || got.Objects {
		t.Errorf("default: %+v, want nothing fsynced (git's default)", got)
	}
	if _, err := refs.Git(dir, nil, "config", "core.fsync", "committed"); err != nil {
		t.Fatal(err)
	}
	if got := open(); !got.Refs || !got.Objects {
		t.Errorf("core.fsync=committed: %+v, want objects and refs", got)
	}
}
