package realhost

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// repo is a throw-away repository with rally's hooks for one host, a
// private HOME for the host's own state, and the scripted model server.
type repo struct {
	t    *testing.T
	dir  string
	home string
	srv  *modelServer
}

func newRepo(t *testing.T, host string) *repo {
	t.Helper()
	root := t.TempDir()
	r := &repo{t: t, dir: filepath.Join(root, "repo"), home: filepath.Join(root, "home"), srv: startServer(t)}
	for _, d := range []string{r.dir, r.home, filepath.Join(r.dir, "src")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r.write("README.md", "test repository\n")
	r.git("init", "-q")
	r.git("add", ".")
	r.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
	r.rally("hooks", "install", "--"+host)
	return r
}

func (r *repo) env(extra ...string) []string {
	env := []string{
		"HOME=" + r.home,
		"PATH=" + binDir + string(os.PathListSeparator) + os.Getenv("PATH"),
		"TERM=dumb",
		"LANG=C.UTF-8",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t",
		"TMPDIR=" + os.TempDir(),
		"RALLY_AUTOPACK=0",
	}
	return append(env, extra...)
}

func (r *repo) write(name, content string) {
	r.t.Helper()
	p := filepath.Join(r.dir, name)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// read returns a file's content, "" with exists false when it is absent.
func (r *repo) read(name string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(r.dir, name))
	return string(b), err == nil
}

func (r *repo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = r.dir, r.env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (r *repo) rally(args ...string) string {
	r.t.Helper()
	return r.rallyIn(".", args...)
}

// rallyIn runs git-rally in a directory of the repository.
func (r *repo) rallyIn(sub string, args ...string) string {
	r.t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "git-rally"), args...)
	cmd.Dir, cmd.Env = filepath.Join(r.dir, sub), r.env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git rally %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

type fact struct {
	ID, Kind, Tool, Session, Subject string
	Scopes                           []string
}

// facts reads the whole ledger.
func (r *repo) facts() []fact {
	r.t.Helper()
	var fs []fact
	if err := json.Unmarshal([]byte(r.rally("log", "--json")), &fs); err != nil {
		r.t.Fatalf("git rally log --json: %v", err)
	}
	return fs
}

// find returns the facts of kind by tool (any tool when "").
func (r *repo) find(kind, tool string) []fact {
	var out []fact
	for _, f := range r.facts() {
		if f.Kind == kind && (tool == "" || f.Tool == tool) {
			out = append(out, f)
		}
	}
	return out
}

// claimed says whether tool holds a claim of file:path now.
func (r *repo) claimed(tool, path string) bool {
	var room struct {
		Claims []struct {
			Tool   string   `json:"tool"`
			Scopes []string `json:"scopes"`
		} `json:"claims"`
	}
	json.Unmarshal([]byte(r.rally("room", "--json")), &room)
	for _, c := range room.Claims {
		for _, s := range c.Scopes {
			if c.Tool == tool && s == "file:"+path {
				return true
			}
		}
	}
	return false
}

// run runs a host program in the repository and returns its output.
func (r *repo) run(name string, argv []string, env []string) string {
	r.t.Helper()
	return r.runIn(".", name, argv, env)
}

// runIn runs a host program in a directory of the repository.
func (r *repo) runIn(sub, name string, argv []string, env []string) string {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = filepath.Join(r.dir, sub), env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	r.t.Logf("%s: %s in %.1fs", name, exitText(err), time.Since(start).Seconds())
	if ctx.Err() != nil {
		r.t.Fatalf("%s timed out; output:\n%s", name, tail(out.String(), 4000))
	}
	if err != nil {
		r.t.Logf("%s output:\n%s", name, tail(out.String(), 4000))
	}
	return out.String()
}

func exitText(err error) string {
	if err == nil {
		return "exit 0"
	}
	return err.Error()
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// check records one verdict of the suite, in the form the report quotes.
func check(t *testing.T, ok bool, what string, detail ...any) {
	t.Helper()
	if ok {
		t.Logf("ok   %s", what)
		return
	}
	if len(detail) > 0 {
		t.Errorf("FAIL %s: %v", what, detail)
		return
	}
	t.Errorf("FAIL %s", what)
}

// dump writes what the model server received under $RALLY_REALHOST_DUMP,
// for looking at a host's requests by hand.
func (r *repo) dump() {
	dir := os.Getenv("RALLY_REALHOST_DUMP")
	if dir == "" {
		return
	}
	os.MkdirAll(dir, 0o755)
	r.srv.mu.Lock()
	defer r.srv.mu.Unlock()
	for i, q := range r.srv.reqs {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%02d.json", r.t.Name(), i)), []byte(q.path+"\n"+q.body), 0o644)
	}
}
