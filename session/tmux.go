package session

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Tmux is the tmux backend. It is the only code that runs tmux: every
// call is an argv (exec, no shell), and a session's command is given to
// tmux as two or more arguments, which tmux executes directly instead of
// through sh -c. tmux finds its server as usual ($TMUX, $TMUX_TMPDIR).
type Tmux struct {
	// Program is the tmux binary ("" = tmux on PATH).
	Program string
}

func (t *Tmux) program() string {
	if t.Program != "" {
		return t.Program
	}
	return "tmux"
}

// Name implements Backend.
func (t *Tmux) Name() string { return "tmux" }

// Available implements Backend.
func (t *Tmux) Available() error {
	if _, err := exec.LookPath(t.program()); err != nil {
		return &NoBackendError{Program: "tmux", Hint: "install tmux (apt-get install tmux, brew install tmux, dnf install tmux), then run it again"}
	}
	return nil
}

func (t *Tmux) run(stdin []byte, args ...string) (string, error) {
	cmd := exec.Command(t.program(), args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = err.Error()
		}
		return out.String(), fmt.Errorf("tmux %s: %s", args[0], msg)
	}
	return out.String(), nil
}

// tgt turns a recorded target into a tmux target: a pane id (%3) as it
// is, a session name as "=name:", which matches only that session (tmux
// otherwise falls back to prefix and pattern matches).
func tgt(target string) string {
	if strings.HasPrefix(target, "%") {
		return target
	}
	return "=" + target + ":"
}

// Start implements Backend.
func (t *Tmux) Start(name, dir string, env, argv []string) error {
	if len(argv) == 0 {
		return fmt.Errorf("nothing to run")
	}
	args := []string{"new-session", "-d", "-s", name, "-c", dir, "-x", "200", "-y", "50"}
	for _, kv := range env {
		args = append(args, "-e", kv)
	}
	// env(1) in front keeps the argv at two or more words, so tmux
	// execs it rather than handing a single word to sh -c.
	args = append(args, "--", "env", "--")
	args = append(args, argv...)
	_, err := t.run(nil, args...)
	return err
}

// Live implements Backend: every session name and pane id, from one
// list-panes of the whole server. No server running means nothing is.
func (t *Tmux) Live() (map[string]bool, error) {
	live := map[string]bool{}
	out, err := t.run(nil, "list-panes", "-a", "-F", "#{session_name}\t#{pane_id}")
	if err != nil {
		if noServer(err) {
			return live, nil
		}
		return nil, err
	}
	for _, line := range strings.Split(out, "\n") {
		name, pane, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		live[name] = true
		live[pane] = true
	}
	return live, nil
}

func noServer(err error) bool {
	s := err.Error()
	return strings.Contains(s, "no server running") || strings.Contains(s, "error connecting") ||
		strings.Contains(s, "No such file or directory") || strings.Contains(s, "no current target") ||
		strings.Contains(s, "no sessions")
}

// Resolve implements Backend.
func (t *Tmux) Resolve(target string) (string, string, error) {
	out, err := t.run(nil, "display-message", "-p", "-t", target, "#{pane_id}\t#{session_name}")
	if err != nil {
		return "", "", err
	}
	pane, sess, _ := strings.Cut(strings.TrimSpace(out), "\t")
	if pane == "" {
		return "", "", fmt.Errorf("tmux: no pane for %q", target)
	}
	return pane, sess, nil
}

// Capture implements Backend.
func (t *Tmux) Capture(target string, lines int) ([]string, error) {
	out, err := t.run(nil, "capture-pane", "-p", "-J", "-t", tgt(target), "-S", "-"+strconv.Itoa(lines))
	if err != nil {
		return nil, err
	}
	all := strings.Split(strings.TrimRight(out, "\n"), "\n")
	for len(all) > 0 && strings.TrimSpace(all[len(all)-1]) == "" {
		all = all[:len(all)-1]
	}
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return all, nil
}

// PasteSettle is how long Paste waits between the paste and its Enter.
var PasteSettle = 300 * time.Millisecond

// Paste implements Backend: the text goes into a named buffer through
// stdin (load-buffer), is pasted and deleted (paste-buffer -d, bracketed
// when the program asked for it with -p), then one Enter submits it.
func (t *Tmux) Paste(target, text string) error {
	var b [6]byte
	rand.Read(b[:])
	buf := "rally-" + hex.EncodeToString(b[:])
	if _, err := t.run([]byte(text), "load-buffer", "-b", buf, "-"); err != nil {
		return err
	}
	if _, err := t.run(nil, "paste-buffer", "-d", "-p", "-b", buf, "-t", tgt(target)); err != nil {
		t.run(nil, "delete-buffer", "-b", buf)
		return err
	}
	// A host may read an Enter that follows a paste closely as part of it
	// (Gemini CLI makes it a newline within 40 ms of an untrusted paste,
	// counted from when it has handled the paste): wait until the pasted
	// text shows, then a little more.
	t.waitShown(target, text, 3*time.Second)
	time.Sleep(PasteSettle)
	_, err := t.run(nil, "send-keys", "-t", tgt(target), "Enter")
	return err
}

// waitShown waits (at most max) until the target's screen shows the
// start of text.
func (t *Tmux) waitShown(target, text string, max time.Duration) {
	probe := strings.TrimSpace(text)
	if i := strings.IndexByte(probe, '\n'); i >= 0 {
		probe = probe[:i]
	}
	if len(probe) > 24 {
		probe = probe[:24]
	}
	for deadline := time.Now().Add(max); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		out, err := t.run(nil, "capture-pane", "-p", "-J", "-t", tgt(target))
		if err != nil || strings.Contains(out, probe) {
			return
		}
	}
}

// Kill implements Backend: a session rally started ends whole; an
// adopted pane ends alone.
func (t *Tmux) Kill(target string) error {
	verb := "kill-session"
	if strings.HasPrefix(target, "%") {
		verb = "kill-pane"
	}
	_, err := t.run(nil, verb, "-t", tgt(target))
	return err
}

// Attach implements Backend.
func (t *Tmux) Attach(target string) error {
	args := []string{"attach-session", "-t", tgt(target)}
	if os.Getenv("TMUX") != "" {
		args = []string{"switch-client", "-t", tgt(target)}
	}
	cmd := exec.Command(t.program(), args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	return cmd.Run()
}

// Foreground implements Foregrounder: the program in the foreground of
// the target's pane (#{pane_current_command}: bash, node, codex...).
func (t *Tmux) Foreground(target string) (string, error) {
	out, err := t.run(nil, "display-message", "-p", "-t", tgt(target), "#{pane_current_command}")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(out), nil
}
