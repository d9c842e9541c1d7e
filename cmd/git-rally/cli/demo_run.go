package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/ledger"
	"github.com/git-rally/git-rally/refs"
)

// demoResult is one step as it ran.
type demoResult struct {
	N       int               `json:"n"`
	Command string            `json:"command"`
	Exit    int               `json:"exit"`
	Facts   []json.RawMessage `json:"facts"`
	Room    roomJSON          `json:"room"`
	Dir     string            `json:"dir"`     // where it ran: repo, or repo/<worktree>
	Explain string            `json:"explain"` // the one line of plain explanation
	Stdout  string            `json:"stdout"`
	Stderr  string            `json:"stderr"`
	At      string            `json:"at"` // RALLY_NOW of the step
}

type demoCounts struct {
	ClaimsAccepted int `json:"claims_accepted"`
	ClaimsRefused  int `json:"claims_refused"`
	Handoffs       int `json:"handoffs"`
	Receipts       int `json:"receipts"`
	Worktrees      int `json:"worktrees"`
	worktrees      map[string]bool
	Risks          int `json:"risks"`
}

type demoJSON struct {
	Choices demoChoices  `json:"choices"`
	Agents  []demoAgent  `json:"agents"`
	Steps   []demoResult `json:"steps"`
	Counts  demoCounts   `json:"counts"`
}

// demoEnv is the environment every step runs in: no identity or git
// setting of the user leaks in, and git's dates follow the demo's clock.
// The git hooks rally puts in the demo's worktrees stay quiet: they run
// git-rally only when it is on PATH, and a demo is computed from its
// choices alone.
var demoEnv = map[string]string{
	"RALLY_TOOL": "", "RALLY_SESSION": "", "RALLY_HOOK_STRICT": "", "RALLY_AUTOPACK": "0", "RALLY_HOOKS": "off",
	"GIT_DIR": "", "GIT_WORK_TREE": "", "GIT_INDEX_FILE": "", "GIT_CEILING_DIRECTORIES": "",
	"GIT_CONFIG_GLOBAL": os.DevNull, "GIT_CONFIG_NOSYSTEM": "1",
	"GIT_AUTHOR_NAME": "Demo", "GIT_AUTHOR_EMAIL": "demo@example.com",
	"GIT_COMMITTER_NAME": "Demo", "GIT_COMMITTER_EMAIL": "demo@example.com",
}

// setDemoEnv applies demoEnv to the process and returns what undoes it.
func setDemoEnv() func() {
	type saved struct {
		v  string
		ok bool
	}
	old := map[string]saved{}
	for _, k := range append(demoEnvKeys(), "RALLY_NOW", "GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE") {
		v, ok := os.LookupEnv(k)
		old[k] = saved{v, ok}
	}
	for _, k := range demoEnvKeys() {
		if v := demoEnv[k]; v == "" {
			os.Unsetenv(k)
		} else {
			os.Setenv(k, v)
		}
	}
	return func() {
		for k, s := range old {
			if s.ok {
				os.Setenv(k, s.v)
			} else {
				os.Unsetenv(k)
			}
		}
	}
}

func demoEnvKeys() []string {
	ks := make([]string, 0, len(demoEnv))
	for k := range demoEnv {
		ks = append(ks, k)
	}
	return ks
}

func setDemoClock(t time.Time) {
	s := t.UTC().Format(time.RFC3339)
	os.Setenv("RALLY_NOW", s)
	os.Setenv("GIT_AUTHOR_DATE", s)
	os.Setenv("GIT_COMMITTER_DATE", s)
}

// demoPlace locks the demo's repository path: one fixed, private directory
// per user under the temporary directory, so that paths, and the ids of
// facts that carry them, are the same on every run. Demos of one user run
// in turn. release removes the repository unless keep.
func demoPlace(keep bool) (repo string, release func(), err error) {
	base := filepath.Join(os.TempDir(), fmt.Sprintf("git-rally-demo-%d", os.Getuid()))
	for try := 0; try < 50; try++ {
		if err := os.Mkdir(base, 0o700); err != nil && !os.IsExist(err) {
			return "", nil, err
		}
		fi, err := os.Lstat(base)
		if err != nil {
			continue
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !fi.IsDir() || !ok || int(st.Uid) != os.Getuid() || fi.Mode().Perm()&0o077 != 0 {
			return "", nil, fmt.Errorf("refusing to use %s: it is not a private directory of yours", base)
		}
		d, err := os.Open(base)
		if err != nil {
			return "", nil, err
		}
		if err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX); err != nil {
			d.Close()
			return "", nil, err
		}
		// A demo that finished meanwhile removed the directory we locked.
		held, err1 := d.Stat()
		cur, err2 := os.Lstat(base)
		if err1 != nil || err2 != nil || !os.SameFile(held, cur) {
			d.Close()
			continue
		}
		real, err := filepath.EvalSymlinks(base)
		if err != nil {
			d.Close()
			return "", nil, err
		}
		repo = filepath.Join(real, "repo")
		if err := os.RemoveAll(repo); err != nil {
			d.Close()
			return "", nil, err
		}
		return repo, func() {
			if !keep {
				os.RemoveAll(repo)
				os.Remove(base)
			}
			d.Close()
		}, nil
	}
	return "", nil, fmt.Errorf("could not lock %s", base)
}

// demoRepo makes the starting repository: the files, one commit.
func demoRepo(repo string) error {
	if err := os.MkdirAll(repo, 0o777); err != nil {
		return err
	}
	setDemoClock(demoStart)
	if _, err := refs.Git(repo, nil, "init", "-q", "-b", "main"); err != nil {
		return err
	}
	for _, p := range demoFiles {
		if err := os.MkdirAll(filepath.Join(repo, filepath.Dir(p)), 0o777); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(repo, p), []byte("// "+p+"\n"), 0o666); err != nil {
			return err
		}
	}
	if _, err := refs.Git(repo, nil, "add", "."); err != nil {
		return err
	}
	_, err := refs.Git(repo, nil, "commit", "-q", "-m", "start")
	return err
}

// runDemoSteps plays the script in repo and records every step. It
// changes the process's directory and environment while it runs (the
// commands run in-process) and puts both back.
func runDemoSteps(repo string, steps []demoStep, agents []demoAgent, each func(demoResult)) ([]demoResult, demoCounts, error) {
	var counts demoCounts
	restore := setDemoEnv()
	defer restore()
	old, err := os.Getwd()
	if err != nil {
		return nil, counts, err
	}
	defer os.Chdir(old)
	for _, a := range agents {
		if a.Managed {
			demoTerminal = newFakeTerminal()
			defer func() { demoTerminal = nil }()
			break
		}
	}
	if err := demoRepo(repo); err != nil {
		return nil, counts, fmt.Errorf("making the demo repository: %w", err)
	}
	ids := map[string]string{}
	seen := map[string]bool{}
	var out []demoResult
	for i, s := range steps {
		r := demoResult{N: i + 1, Dir: "repo", Explain: s.Say, At: s.At.UTC().Format(time.RFC3339)}
		dir := repo
		if s.Who >= 0 && agents[s.Who].Dir != "" {
			dir = filepath.Join(repo, agents[s.Who].Dir)
			r.Dir = "repo/" + agents[s.Who].Dir
		}
		if err := os.Chdir(dir); err != nil {
			return nil, counts, err
		}
		setDemoClock(s.At)
		switch {
		case s.Args != nil:
			args := make([]string, len(s.Args))
			for k, a := range s.Args {
				if id, ok := ids[strings.TrimPrefix(a, "@")]; ok && strings.HasPrefix(a, "@") {
					a = id
				}
				args[k] = a
			}
			r.Command = "RALLY_NOW=" + s.At.UTC().Format(time.RFC3339) + " git rally " + shellJoin(args)
			var o, e bytes.Buffer
			r.Exit = Run(args, strings.NewReader(""), &o, &e)
			r.Stdout, r.Stderr = o.String(), e.String()
			if s.Save != "" && r.Exit == 0 {
				if fs := strings.Fields(r.Stdout); len(fs) > 0 {
					ids[s.Save] = fs[0]
				}
			}
		case s.Git != nil:
			r.Command = "git " + shellJoin(s.Git)
			o, err := refs.Git(dir, nil, s.Git...)
			r.Stdout = o
			if ge, ok := err.(*refs.GitError); ok {
				r.Exit, r.Stderr = ge.Code, ge.Stderr
			} else if err != nil {
				return nil, counts, err
			}
		case s.Edit != nil:
			r.Command = "printf '%s\\n' " + shellQuoteArg(s.Edit.Line) + " >> " + shellQuoteArg(s.Edit.Path)
			if err := appendLine(filepath.Join(dir, s.Edit.Path), s.Edit.Line); err != nil {
				return nil, counts, err
			}
		}
		if r.Exit != s.Want {
			return nil, counts, fmt.Errorf("demo step %d (%s) exited %d, want %d:\n%s%s", r.N, r.Command, r.Exit, s.Want, r.Stdout, r.Stderr)
		}
		newFacts, room, err := demoAfter(repo, s.At, seen)
		if err != nil {
			return nil, counts, err
		}
		r.Facts, r.Room = cmdutil.RawFacts(newFacts), room
		countStep(&counts, s, r, newFacts)
		out = append(out, r)
		if each != nil {
			each(r)
		}
	}
	return out, counts, nil
}

// demoAfter reads what a step wrote and the room it left.
func demoAfter(repo string, at time.Time, seen map[string]bool) ([]*facts.Fact, roomJSON, error) {
	l, err := ledger.Open(filepath.Join(repo, ".git"), func() time.Time { return at })
	if err != nil {
		return nil, roomJSON{}, err
	}
	defer l.Close()
	all, err := l.All()
	if err != nil {
		return nil, roomJSON{}, err
	}
	var fresh []*facts.Fact
	for _, fa := range all {
		if !seen[fa.ID] {
			seen[fa.ID] = true
			fresh = append(fresh, fa)
		}
	}
	st, err := l.Read()
	if err != nil {
		return nil, roomJSON{}, err
	}
	room := toRoomJSON(st.Room(at))
	// The room as `git rally room` shows it: its managed sessions too
	// (the demo's stand-in terminal answers for them), [] for none.
	room.Sessions = roomSessions(st)
	return fresh, room, nil
}

func countStep(c *demoCounts, s demoStep, r demoResult, fs []*facts.Fact) {
	if s.Args != nil && s.Args[0] == "claim" && r.Exit == ExitRefused {
		c.ClaimsRefused++
	}
	// Worktrees as the room counts them: every one it has listed, made
	// by worktree add or by run.
	for _, w := range r.Room.Worktrees {
		if !c.worktrees[w.Name] {
			if c.worktrees == nil {
				c.worktrees = map[string]bool{}
			}
			c.worktrees[w.Name] = true
			c.Worktrees++
		}
	}
	for _, fa := range fs {
		switch fa.Kind {
		case facts.KindClaim:
			c.ClaimsAccepted++
		case facts.KindHandoff:
			c.Handoffs++
		case facts.KindReceipt:
			c.Receipts++
		case facts.KindRisk:
			c.Risks++
		}
	}
}

func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(line + "\n"); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuoteArg(a)
	}
	return strings.Join(q, " ")
}

// shellQuoteArg quotes an argument the way a person would type it for sh.
func shellQuoteArg(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@,+%", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
