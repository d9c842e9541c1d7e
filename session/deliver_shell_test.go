package session

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-rally/git-rally/delivery"
	"github.com/git-rally/git-rally/facts"
)

// hostile are texts a peer (or a teammate's synced ledger) may hold, each
// of which runs `touch <marker>` when a shell reads it as a command line.
// MARK is replaced by the marker's path.
var hostile = []struct{ where, text string }{
	{"subject", "review $(touch MARK)"},
	{"subject", "review `touch MARK`"},
	{"subject", "done; touch MARK"},
	{"subject", "fix & touch MARK"},
	{"subject", "ok | touch MARK"},
	{"subject", "a\ntouch MARK\n"},
	{"subject", "x '; touch MARK; echo '"},
	{"subject", "x \"; touch MARK; echo \""},
	{"body", "see <(touch MARK) and >(touch MARK)"},
	{"body", "line one\r\ntouch MARK\r\nline three"},
	{"body", "a && touch MARK || touch MARK"},
	{"body", "$'\\x0a'touch MARK"},
	{"files", "src/a.go;touch MARK"},
	{"files", "$(touch MARK).go"},
	{"revision", "$(touch MARK)"},
	{"tool", "codex:x$(touch${IFS}MARK)"},
	{"tool", "codex:`touch${IFS}MARK`"},
	{"text", "\x1b[201~\ntouch MARK\n"},
	{"text", "!! ; touch MARK"},
	{"text", "x\\\ntouch MARK"},
}

func needTmuxShells(t *testing.T) {
	t.Helper()
	old := PasteSettle
	PasteSettle = 20 * time.Millisecond // shells take an Enter right after a paste
	t.Cleanup(func() { PasteSettle = old })
	for _, p := range []string{"tmux", "bash", "dash"} {
		if _, err := exec.LookPath(p); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not installed", p)
			}
			t.Skipf("%s is not installed", p)
		}
	}
}

// shellPane starts an interactive shell (argv) in a pane of a private tmux
// server, in dir, and returns the backend and the pane's target.
func shellPane(t *testing.T, dir, name string, argv ...string) (*Tmux, string) {
	t.Helper()
	tm := &Tmux{}
	env := []string{"HOME=" + dir, "PS1=$ ", "ENV=", "TERM=tmux-256color", "HISTFILE=" + filepath.Join(dir, ".hist"), "PATH=" + os.Getenv("PATH")}
	if err := tm.Start(name, dir, nil, append(append([]string{"env", "-i"}, env...), argv...)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tm.Kill(name) })
	// wait for its prompt: a key sent before the shell runs would reach
	// env(1) instead
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if lines, _ := tm.Capture(name, 5); len(lines) > 0 && strings.Contains(strings.Join(lines, "\n"), "$") {
			return tm, name
		}
	}
	t.Fatalf("%s never showed its prompt", argv[0])
	return tm, name
}

// settle waits until the shell in target has run everything before a
// sentinel command the test (not rally) types, so that anything pasted
// before it had its chance to run.
func settle(t *testing.T, tm *Tmux, target, dir string, n int) {
	t.Helper()
	sentinel := filepath.Join(dir, fmt.Sprintf("sentinel-%d", n))
	if _, err := tm.run(nil, "send-keys", "-t", tgt(target), "-l", "touch "+sentinel); err != nil {
		t.Fatal(err)
	}
	tm.run(nil, "send-keys", "-t", tgt(target), "Enter")
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(sentinel); err == nil {
			return
		}
	}
	lines, _ := tm.Capture(target, 8)
	t.Errorf("the shell never ran the test's sentinel command (a pasted line left it in the middle of a command); it ends with:\n%s", strings.Join(lines, "\n"))
}

// hostileDelivery is a delivery whose every peer field holds text that
// runs a command in a shell.
func hostileDelivery(i int, where, text string) *Delivery {
	h := &facts.Fact{ID: "f_0123456789abcdef", Kind: facts.KindHandoff, Tool: "codex:01", Target: "claude_code:01", Subject: "plain"}
	d := &Delivery{Session: &facts.Fact{Name: "x-01", Tool: "claude_code:01", Target: "x"}, Handoff: h, Sender: facts.Owner{Tool: "codex:01"}}
	switch where {
	case "subject":
		h.Subject = text
	case "body":
		h.Body = text
	case "files":
		h.Files = []string{text, "ok.go"}
	case "revision":
		h.Revision = text
	case "tool":
		h.Tool, d.Sender.Tool, d.Session.Tool = text, text, text
	case "text":
		d.Handoff, d.Text = nil, text
	}
	return d
}

// TestPastedMessageIsInertInRealShells pastes every hostile message, as
// rally pastes it (one line, a bracketed buffer paste, then Enter), into a
// real interactive bash and dash: no marker file may appear. Rally never
// pastes into a shell (DeliveryPlan); this proves that even a message that
// reached one by mistake runs nothing.
func TestPastedMessageIsInertInRealShells(t *testing.T) {
	needTmuxShells(t)
	for _, sh := range [][]string{{"bash", "--norc", "--noprofile", "-i"}, {"dash", "-i"}} {
		t.Run(sh[0], func(t *testing.T) {
			// a server of its own: the last server's may still be exiting
			t.Setenv("TMUX_TMPDIR", shortTemp(t))
			t.Setenv("TMUX", "")
			dir := t.TempDir()
			tm, pane := shellPane(t, dir, "rally-inert-"+sh[0], sh...)
			settle(t, tm, pane, dir, 0)
			for i, p := range hostile {
				marker := filepath.Join(dir, fmt.Sprintf("marker-%02d", i))
				d := hostileDelivery(i, p.where, strings.ReplaceAll(p.text, "MARK", marker))
				line := d.Line()
				for _, c := range []byte(line) {
					if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(" .,:/+-_=%", c) >= 0) {
						t.Errorf("payload %d (%s): the pasted line holds %q: %q", i, p.where, c, line)
						break
					}
				}
				if err := tm.Paste(pane, line); err != nil {
					t.Fatal(err)
				}
			}
			settle(t, tm, pane, dir, 1)
			for i, p := range hostile {
				if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("marker-%02d", i))); err == nil {
					t.Errorf("%s ran payload %d (%s %q)", sh[0], i, p.where, p.text)
				}
			}
		})
	}
}

// TestDeliverNeverTypesIntoAShell: inject and handoff delivery into a
// pane whose foreground program is a shell queue the message and type
// nothing, whatever it holds.
func TestDeliverNeverTypesIntoAShell(t *testing.T) {
	needTmuxShells(t)
	t.Setenv("TMUX_TMPDIR", shortTemp(t))
	t.Setenv("TMUX", "")
	r, l := testRepo(t)
	for _, sh := range [][]string{{"bash", "--norc", "--noprofile", "-i"}, {"dash", "-i"}} {
		dir := t.TempDir()
		tm, name := shellPane(t, dir, "rally-adopted-"+sh[0], sh...)
		settle(t, tm, name, dir, 0)
		pane, _, err := tm.Resolve("=" + name + ":")
		if err != nil {
			t.Fatal(err)
		}
		s := &facts.Fact{Kind: facts.KindSession, Tool: "shell:" + sh[0], Session: sh[0], Name: sh[0], Status: StatusLive,
			Backend: "tmux", Target: pane, Agent: sh[0]}
		if _, err := l.Append(facts.Simple(s)); err != nil {
			t.Fatal(err)
		}
		for i, p := range hostile {
			marker := filepath.Join(dir, fmt.Sprintf("marker-%02d", i))
			d := hostileDelivery(i, p.where, strings.ReplaceAll(p.text, "MARK", marker))
			if p.where == "tool" {
				d.Sender.Tool = "codex:01" // the sender's own id is checked at input
			}
			d.Session = s
			d.Handoff = nil
			if d.Text == "" {
				d.Text = strings.ReplaceAll(p.text, "MARK", marker)
			}
			res, err := Deliver(l, tm, d)
			if err != nil {
				t.Fatalf("payload %d: %v", i, err)
			}
			if !res.Queued || len(res.Facts) != 0 || !strings.Contains(res.Why, "runs a shell ("+sh[0]+")") {
				t.Errorf("%s payload %d: not queued for the shell: %+v", sh[0], i, res)
			}
		}
		settle(t, tm, name, dir, 1)
		for i := range hostile {
			if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("marker-%02d", i))); err == nil {
				t.Errorf("%s ran payload %d", sh[0], i)
			}
		}
		if n := len(delivery.Pending(r.CommonDir, sh[0])); n != len(hostile) {
			t.Errorf("%s: %d messages queued, want %d", sh[0], n, len(hostile))
		}
	}
	st, err := l.Read()
	if err != nil {
		t.Fatal(err)
	}
	if n := st.ByKind[facts.KindDelivery]; n != 0 {
		t.Errorf("%d delivery facts written for messages that reached nobody", n)
	}
}

// shortTemp is a temporary directory with a short path: a tmux socket
// path must stay under about 100 bytes.
func shortTemp(t *testing.T) string {
	dir, err := os.MkdirTemp("", "rt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		exec.Command("tmux", "-S", filepath.Join(dir, fmt.Sprintf("tmux-%d", os.Getuid()), "default"), "kill-server").Run()
		os.RemoveAll(dir)
	})
	return dir
}
