package testscripts

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The README is run as a reader would paste it: every ```sh block of
// every section, line by line, in a fresh HOME and a fresh repository;
// each line exits 0, or with the exit code its comment announces ("exit
// 3"). A section whose commands cannot run here says why in readmeSections,
// and so does a line left out; a section the README gains and this table
// does not know fails the test.

// readmeSection is how one section's block runs.
type readmeSection struct {
	setup    string            // bash run first, in the work directory
	teardown string            // bash run last
	skip     map[string]string // a line that does not run (matched by prefix) and why
	why      string            // the whole section does not run, and why
	// serve: a line starting with one of these serves until Ctrl-C: it runs
	// in the background until it prints its URL, then gets SIGINT.
	serve []string
}

// a repository with one commit in $PWD/repo, entered.
const readmeRepo = `git init -q repo && cd repo && git commit -q --allow-empty -m first
`

var readmeSections = map[string]readmeSection{
	"# git rally": {setup: "cd \"$RALLY_MODULE\"\n", skip: map[string]string{
		"go test ./...":               "the whole suite: CI runs it",
		"go test ./hosts/realhost -v": "the real hosts from npm, as root: CI's realhost job",
	}},
	"## Install": {skip: map[string]string{
		"CGO_ENABLED=0 go install ./cmd/...": "the test runs the binaries it built into a prefix",
	}},
	"## A five-minute tour": {setup: `git init -q your-repo && git -C your-repo commit -q --allow-empty -m first
`},
	"## Agent worktrees and the merge plan": {setup: readmeRepo},
	"## Managed sessions": {
		// codex and claude are stand-ins that wait at a prompt (the real
		// ones: hosts/realhost); tmux runs on the test's own socket
		// directory and is killed at the end.
		// RALLY_TOOL as the tour exported it.
		setup: readmeRepo + readmeFakeAgents + "export RALLY_TOOL=claude_code:impl-1\n" + `tmux new-session -d -s work -x 80 -y 24 && tmux new-window -t work:1
`,
		teardown: "tmux kill-server\n",
		skip: map[string]string{
			"git rally attach codex-01":                    "takes the terminal: needs one",
			"git rally inject codex-01 --handoff f_1a2b3c": "f_1a2b3c stands for a handoff's id; the line above delivers one",
		}},
	"## Workstreams: one job, owned tasks, closed on evidence": {
		// plan run starts the stand-in codex in tmux (it takes its task and
		// waits: nothing is reported, so docs stays waiting and close is
		// refused, as the line's comment says).
		setup:    readmeRepo + readmeFakeAgents + readmePlan,
		teardown: "tmux kill-server\n",
	},
	"## Sharing with teammates": {setup: readmeRepo + `git init -q --bare ../origin.git && git remote add origin ../origin.git && git push -q origin HEAD
`},
	"## Signed facts": {setup: readmeRepo + `mkdir -p ~/.ssh && ssh-keygen -q -t ed25519 -N '' -f ~/.ssh/id_ed25519 -C test
`},
	"## Hooks":                      {setup: readmeRepo},
	"### Upgrading":                 {setup: readmeRepo},
	"## Agents call rally as tools": {setup: readmeRepo},
	"## See the room":               {setup: readmeRepo + "git rally init\n", serve: []string{"git rally serve"}},
	"## Speed":                      {why: "benchmarks of minutes; bench/run.sh and CI's bench job run them"},
}

// readmeFakeAgents puts codex and claude stand-ins first on PATH: each
// says it is ready and waits, as an agent at its prompt.
const readmeFakeAgents = `mkdir -p ~/bin && for a in codex claude; do
cat > ~/bin/$a <<FAKE
#!/bin/sh
[ "\$1" = app-server ] && exit 1   # rally asks codex to approve its hooks: no such service here
echo "fake $a ready"
exec sleep 300
FAKE
chmod 755 ~/bin/$a; done
export PATH="$HOME/bin:$PATH"
`

const readmePlan = `cat > plan.json <<'PLAN'
{"id": "checkout-v2", "goal": "new checkout flow",
 "tasks": [
  {"id": "api",  "owns": ["dir:src/api"], "depends_on": [], "check": "go test ./src/api/..."},
  {"id": "ui",   "owns": ["src/ui/"], "depends_on": [], "check": "npm test"},
  {"id": "docs", "owns": ["docs/checkout.md"], "depends_on": ["api", "ui"], "check": "test -s docs/checkout.md"}
 ]}
PLAN
`

// TestREADMETour runs the README's five-minute tour (the first section a
// reader follows) on its own, so its failure names it.
func TestREADMETour(t *testing.T) {
	runREADMESection(t, "## A five-minute tour", readmeSections["## A five-minute tour"])
}

// TestREADMESections runs every other section's commands.
func TestREADMESections(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	heading := ""
	inBlock := false
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "```") && inBlock:
			inBlock = false
		case strings.HasPrefix(l, "```sh"):
			inBlock = true
			if !seen[heading] {
				seen[heading] = true
				if _, ok := readmeSections[heading]; !ok {
					t.Errorf("README section %q has an sh block this test does not know: add it to readmeSections", heading)
				}
			}
		case strings.HasPrefix(l, "```"):
			inBlock = true
		case !inBlock && strings.HasPrefix(l, "#"):
			heading = l
		}
	}
	for h := range readmeSections {
		if !seen[h] {
			t.Errorf("readmeSections has %q, which has no sh block in the README any more", h)
		}
	}
	for h, sec := range readmeSections {
		if h == "## A five-minute tour" {
			continue
		}
		t.Run(strings.TrimLeft(h, "# "), func(t *testing.T) {
			if sec.why != "" {
				t.Skip(sec.why)
			}
			runREADMESection(t, h, sec)
		})
	}
}

var exitRE = regexp.MustCompile(`\bexit (\d+)`)

// runREADMESection runs every line of a section's sh blocks in one bash,
// as pasted, and checks each line's exit code.
func runREADMESection(t *testing.T, heading string, sec readmeSection) {
	var lines []string
	for _, block := range readmeBlocks(t, heading) {
		lines = append(lines, block...)
	}
	prefix := installedBinary(t)
	env := userEnv(t, prefix)
	home := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	// The hosts' settings (trust files) go in the fresh HOME; tmux, if a
	// line starts one, on a private socket directory.
	env = append(env, "TMUX_TMPDIR="+home, "TZ=UTC")
	// go run in the module, with the build cache the tests use (a fresh
	// HOME would mean a cold one: minutes).
	module, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	env = append(env, "RALLY_MODULE="+module)
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOFLAGS", "GOTOOLCHAIN"} {
		if v, err := exec.Command("go", "env", k).Output(); err == nil {
			env = append(env, k+"="+strings.TrimSpace(string(v)))
		}
	}
	work := t.TempDir()
	var script strings.Builder
	script.WriteString("exec 3>&1\n")
	script.WriteString(sec.setup)
	var want []int
	var shown []string
	for _, l := range lines {
		trim := strings.TrimSpace(l)
		if trim == "" || strings.HasPrefix(trim, "#") {
			continue
		}
		skipped := false
		for p, why := range sec.skip {
			if strings.HasPrefix(trim, p) {
				t.Logf("not run: %s (%s)", trim, why)
				skipped = true
			}
		}
		if skipped {
			continue
		}
		code := 0
		if _, comment, ok := strings.Cut(l, " # "); ok {
			if m := exitRE.FindStringSubmatch(comment); m != nil {
				code, _ = strconv.Atoi(m[1])
			}
		}
		n := len(want)
		want = append(want, code)
		shown = append(shown, trim)
		serves := false
		for _, p := range sec.serve {
			serves = serves || strings.HasPrefix(trim, p)
		}
		if serves {
			cmd, _, _ := strings.Cut(l, " # ")
			// Serve until it prints its URL, then Ctrl-C as a terminal sends
			// it (SIGINT to the job's process group: git, git-rally and the
			// server); the line passes when a URL came and the server
			// stopped cleanly: exit 0, or git's 130 for the interrupt.
			fmt.Fprintf(&script, "set -m\n( exec %s ) > serve.out 2> serve.err &\nsp=$!\nset +m\n"+
				"for i in $(seq 200); do grep -q '^http://127.0.0.1:' serve.out && break; sleep 0.1; done\n"+
				"grep -q '^http://127.0.0.1:' serve.out; ok=$?\nkill -INT -- -$sp; wait $sp; rc=$?; [ $rc -eq 130 ] && rc=0\n"+
				"grep -q 'error' serve.err && ok=1\n"+
				"[ $ok -eq 0 ] && echo \"rc %d $rc\" >&3 || { cat serve.out serve.err; echo \"rc %d 99\" >&3; }\n", cmd, n, n)
			continue
		}
		fmt.Fprintf(&script, "%s\necho \"rc %d $?\" >&3\n", l, n)
	}
	script.WriteString(sec.teardown)
	if len(want) == 0 {
		t.Fatalf("%s: no command runs; did the README's block move?", heading)
	}
	c := exec.Command("bash", "-c", script.String())
	c.Dir, c.Env = work, env
	out, _ := c.CombinedOutput()
	if strings.Contains(sec.setup+sec.teardown, "tmux") {
		// whatever the script left on its private socket directory
		k := exec.Command("tmux", "kill-server")
		k.Env = env
		k.Run()
	}
	got := map[int]int{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		var i, rc int
		if _, err := fmt.Sscanf(sc.Text(), "rc %d %d", &i, &rc); err == nil {
			got[i] = rc
		}
	}
	for i := range want {
		rc, ran := got[i]
		if !ran || rc != want[i] {
			t.Errorf("README %s line %q: exit %d (ran: %v), want %d", heading, shown[i], rc, ran, want[i])
		}
	}
	if t.Failed() {
		t.Logf("output:\n%s", out)
	}
}

// readmeBlocks returns the lines of each ```sh block of a section (up to
// the next heading).
func readmeBlocks(t *testing.T, heading string) [][]string {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	var rest string
	if strings.HasPrefix(text, heading+"\n") {
		rest = text[len(heading)+1:]
	} else if _, r, ok := strings.Cut(text, "\n"+heading+"\n"); ok {
		rest = r
	} else {
		t.Fatalf("README.md has no %q", heading)
	}
	var blocks [][]string
	inBlock, sh := false, false
	var cur []string
	for _, l := range strings.Split(rest, "\n") {
		if !inBlock && strings.HasPrefix(l, "#") {
			break
		}
		switch {
		case strings.HasPrefix(l, "```") && inBlock:
			if sh {
				blocks = append(blocks, cur)
			}
			inBlock, cur = false, nil
		case strings.HasPrefix(l, "```"):
			inBlock, sh = true, l == "```sh"
		case inBlock:
			cur = append(cur, l)
		}
	}
	return blocks
}
