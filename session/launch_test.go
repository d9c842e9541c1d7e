package session

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/ledger"
	"github.com/git-rally/git-rally/worktree"
)

// fakeBackend records what rally asked of it; Start fails when told to.
type fakeBackend struct {
	live     map[string]bool
	startErr error
	started  []string
	pasted   []string
	killed   []string
}

func (b *fakeBackend) Name() string     { return "tmux" }
func (b *fakeBackend) Available() error { return nil }
func (b *fakeBackend) Start(name, dir string, env, argv []string) error {
	if b.startErr != nil {
		return b.startErr
	}
	b.started = append(b.started, name)
	b.live[name] = true
	return nil
}
func (b *fakeBackend) Live() (map[string]bool, error) { return b.live, nil }
func (b *fakeBackend) Resolve(t string) (string, string, error) {
	return "%1", t, nil
}
func (b *fakeBackend) Capture(t string, n int) ([]string, error) { return nil, nil }
func (b *fakeBackend) Paste(t, text string) error                { b.pasted = append(b.pasted, text); return nil }
func (b *fakeBackend) Kill(t string) error {
	b.killed = append(b.killed, t)
	delete(b.live, t)
	return nil
}
func (b *fakeBackend) Attach(t string) error { return nil }
func (b *fakeBackend) RunsPrograms() bool    { return true }

func testRepo(t *testing.T) (*worktree.Repo, *ledger.Ledger) {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	// the hosts' programs, for run's preflight (the fake backend runs nothing)
	bin := filepath.Join(dir, "bin")
	os.MkdirAll(bin, 0o755)
	for _, h := range Hosts {
		os.WriteFile(filepath.Join(bin, h.Program()), []byte("#!/bin/sh\n"), 0o755)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	repo := filepath.Join(dir, "repo")
	for _, args := range [][]string{{"init", "-q", "-b", "main", repo},
		{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "base"}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	r, err := worktree.Discover(repo)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	l, err := ledger.Open(r.CommonDir, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return r, l
}

func TestLaunchThatCannotStartLeavesNothing(t *testing.T) {
	r, l := testRepo(t)
	b := &fakeBackend{live: map[string]bool{}, startErr: errors.New("no terminal")}
	st, _ := l.Read()
	p, err := NewPlan(st, r, b, Request{Agent: "codex", Task: "look", Scopes: []string{"file:a.go"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Launch(l, r, b, p); err == nil {
		t.Fatal("Launch succeeded with a backend that cannot start")
	}
	if head, _ := l.HeadString(); head != "" {
		if fs, _ := l.Between("", head); len(fs) > 0 {
			t.Fatalf("facts were recorded: %v", fs)
		}
	}
	if _, err := os.Stat(p.Worktree); !os.IsNotExist(err) {
		t.Fatalf("the worktree %s was left behind (%v)", p.Worktree, err)
	}
}

func TestLaunchThenStop(t *testing.T) {
	r, l := testRepo(t)
	b := &fakeBackend{live: map[string]bool{}}
	st, _ := l.Read()
	p, err := NewPlan(st, r, b, Request{Agent: "gemini", Scopes: []string{"file:a.go"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Launch(l, r, b, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.started) != 1 || b.started[0] != "rally-gemini-01" || len(res.Facts) != 2 {
		t.Fatalf("started %v, facts %v", b.started, res.Facts)
	}
	st, _ = l.Read()
	s, err := Resolve(st, "gemini:01")
	if err != nil {
		t.Fatal(err)
	}
	stopped, err := Stop(l, b, s, false)
	if err != nil {
		t.Fatal(err)
	}
	if !stopped.WasLive || len(b.killed) != 1 || len(stopped.Released) != 1 {
		t.Fatalf("stop: %+v, killed %v", stopped, b.killed)
	}
	st, _ = l.Read()
	if st.Claims.Len() != 0 || st.Sessions["gemini-01"].Status != StatusStopped {
		t.Fatalf("after stop: claims %v, session %+v", st.Claims, st.Sessions["gemini-01"])
	}
	if _, err := os.Stat(p.Worktree); err != nil {
		t.Fatalf("stop removed the worktree: %v", err)
	}
}

func TestLaunchRefusesAHostNotOnPath(t *testing.T) {
	r, l := testRepo(t)
	b := &fakeBackend{live: map[string]bool{}}
	st, _ := l.Read()
	p, err := NewPlan(st, r, b, Request{Agent: "codex", Task: "look"})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir())
	_, err = Launch(l, r, b, p)
	var fe *facts.FailedError
	if !errors.As(err, &fe) || fe.Hint != "npm install -g @openai/codex   (then run it again)" {
		t.Fatalf("Launch of a missing codex: %v", err)
	}
	if len(b.started) != 0 {
		t.Fatalf("started %v", b.started)
	}
	if _, err := os.Stat(p.Worktree); !os.IsNotExist(err) {
		t.Fatalf("a worktree was made: %v", err)
	}
}
