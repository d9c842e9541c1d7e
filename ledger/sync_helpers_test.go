package ledger

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// gitSandbox isolates git from the user's configuration.
func gitSandbox(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o777); err != nil {
		tb.Fatal(err)
	}
	tb.Setenv("HOME", home)
	tb.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	tb.Setenv("GIT_DIR", "")
	os.Unsetenv("GIT_DIR")
	return dir
}

func git(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	out, err := refs.Git(dir, nil, args...)
	if err != nil {
		tb.Fatalf("git %v: %v", args, err)
	}
	return out
}

// clone is one repository with the ledger opened on it, as a process of
// the CLI would open it.
type clone struct {
	name string
	dir  string // work tree
	now  *time.Time
}

func (c *clone) common() string { return filepath.Join(c.dir, ".git") }

func (c *clone) ledger(tb testing.TB) *Ledger {
	tb.Helper()
	l, err := Open(c.common(), func() time.Time { return *c.now })
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { l.Close() })
	return l
}

// network makes a bare remote and n clones with it as origin, all sharing
// one fake clock.
func network(tb testing.TB, n int, now *time.Time) (string, []*clone) {
	tb.Helper()
	root := gitSandbox(tb)
	remote := filepath.Join(root, "remote.git")
	git(tb, root, "init", "-q", "--bare", remote)
	git(tb, remote, "config", "gc.auto", "0")
	var cs []*clone
	for i := 0; i < n; i++ {
		c := &clone{name: fmt.Sprintf("c%d", i), dir: filepath.Join(root, fmt.Sprintf("c%d", i)), now: now}
		git(tb, root, "init", "-q", c.dir)
		git(tb, c.dir, "config", "gc.auto", "0")
		git(tb, c.dir, "remote", "add", "origin", remote)
		cs = append(cs, c)
	}
	return remote, cs
}

func (c *clone) sync(tb testing.TB, push bool) *SyncResult {
	tb.Helper()
	res, err := c.ledger(tb).Sync(SyncOptions{Remote: "origin", Dir: c.dir, Push: push,
		Backoff: func(int) time.Duration { return 0 }})
	if err != nil {
		tb.Fatalf("%s: sync: %v", c.name, err)
	}
	return res
}

func (c *clone) note(tb testing.TB, subject string) *facts.Fact {
	tb.Helper()
	fs, err := c.ledger(tb).Append(facts.Simple(&facts.Fact{Kind: facts.KindNote, Tool: "t:" + c.name, Subject: subject}))
	if err != nil {
		tb.Fatal(err)
	}
	return fs[0]
}

// claim returns the claim, or nil when it was refused.
func (c *clone) claim(tb testing.TB, tool, scope string) *facts.Fact {
	tb.Helper()
	fs, err := c.ledger(tb).Append(facts.Claim(facts.ClaimRequest{Owner: facts.Owner{Tool: tool}, Scopes: []string{scope}}))
	if err != nil {
		if _, ok := err.(*facts.ConflictError); ok {
			return nil
		}
		tb.Fatal(err)
	}
	return fs[len(fs)-1]
}

func (c *clone) ids(tb testing.TB) []string {
	tb.Helper()
	all, err := c.ledger(tb).All()
	if err != nil {
		tb.Fatal(err)
	}
	out := make([]string, len(all))
	for i, f := range all {
		out[i] = f.ID
	}
	return out
}

func (c *clone) state(tb testing.TB) *facts.State {
	tb.Helper()
	st, err := c.ledger(tb).Read()
	if err != nil {
		tb.Fatal(err)
	}
	return st
}
