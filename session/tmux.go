package session

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Tmux is the tmux backend. It is the only code that runs tmux: every
// call is an argv (exec, no shell), and a session's command is given to
// tmux as two or more arguments, which tmux executes directly instead of
// through sh -c. tmux finds its server as usual ($TMUX, $TMUX_TMPDIR).
type Tmux struct {
	// Program is the tmux binary ("" = tmux on PATH).
	Program string
	// Keeper is the git-rally binary that runs a session's command in
	// its pane and outlives it until tmux has read its output (Keep);
	// "" runs the command as the pane's program.
	Keeper string
}

func (t *Tmux) program() string {
	if t.Program != "" {
		return t.Program
	}
	return "tmux"
}

// Name implements Backend.
func (t *Tmux) Name() string { return "tmux" }

// RunsPrograms says that the sessions it starts run real programs (run's
// preflight looks for them on PATH).
func (t *Tmux) RunsPrograms() bool { return true }

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

// Start implements Backend. The pane gets exactly env: tmux would add
// its server's global environment (captured when the server started),
// so every global variable env lacks is unset through env(1) in front of
// argv. remain-on-exit is set in the same tmux command list, before the
// server can see the program end, so a pane whose program exits keeps
// its output and exit status until stop.
func (t *Tmux) Start(name, dir string, env, argv []string) error {
	if len(argv) == 0 {
		return fmt.Errorf("nothing to run")
	}
	args := []string{"new-session", "-d", "-s", name, "-c", dir, "-x", "200", "-y", "50"}
	have := map[string]bool{}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		have[k] = true
		args = append(args, "-e", tmuxWord(kv))
	}
	// env(1) in front keeps the argv at two or more words, so tmux
	// execs it rather than handing a single word to sh -c.
	args = append(args, "--", "env")
	for _, k := range t.globalEnv() {
		if !have[k] && k != "TMUX" && k != "TMUX_PANE" { // tmux sets those for the pane
			args = append(args, "-u", k)
		}
	}
	args = append(args, "--")
	if t.Keeper != "" {
		args = append(args, t.Keeper, KeeperArg, "--")
	}
	for _, a := range argv {
		args = append(args, tmuxWord(a))
	}
	args = append(args, ";", "set-option", "-w", "-t", tgt(name), "remain-on-exit", "on")
	// A pane with a pipe keeps its terminal open while tmux has output
	// of it to read. Without one, tmux before 3.7 closes the terminal of
	// a pane as soon as it sees its program exit (SIGCHLD), read or not:
	// a host that prints an error and exits at once loses it (capture and
	// the last line show nothing; about one such exit in eight on a loaded
	// machine, one in fifty with the pipe). The rest is Linux's: output
	// the kernel has not handed to the terminal's reader yet is not
	// counted as unread (FIONREAD). The keeper (Keep) closes that gap: the
	// pane's program exits only once tmux has read all of it. The pipe's
	// command is a constant that tmux runs through sh -c: no text of the
	// session's is in it.
	args = append(args, ";", "pipe-pane", "-t", tgt(name), "exec cat >/dev/null")
	_, err := t.run(nil, args...)
	return err
}

// tmuxWord keeps an argument that ends in ";" whole: tmux reads such a
// word on its command line as the end of a command, and "\;" as a
// literal ";".
func tmuxWord(a string) string {
	if strings.HasSuffix(a, ";") {
		return a[:len(a)-1] + `\;`
	}
	return a
}

// globalEnv names the variables of the running server's global
// environment (none when no server runs: a new one starts with the
// caller's).
func (t *Tmux) globalEnv() []string {
	out, err := t.run(nil, "show-environment", "-g")
	if err != nil {
		return nil
	}
	var ks []string
	for _, line := range strings.Split(out, "\n") {
		if line == "" || strings.HasPrefix(line, "-") {
			continue
		}
		k, _, _ := strings.Cut(line, "=")
		if k != "" && !strings.ContainsAny(k, " \t") {
			ks = append(ks, k)
		}
	}
	return ks
}

// Live implements Backend: every session name and pane id whose program
// runs, from one list-panes of the whole server. A dead pane (kept by
// remain-on-exit) is not live. No server running, or one that is
// exiting as its last session ended, means nothing is.
func (t *Tmux) Live() (map[string]bool, error) {
	live := map[string]bool{}
	out, err := t.run(nil, "list-panes", "-a", "-F", "#{session_name}\t#{pane_id}\t#{pane_dead}")
	if err != nil {
		if noServer(err) {
			return live, nil
		}
		return nil, err
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, "\t")
		if len(f) < 2 || len(f) > 2 && f[2] == "1" {
			continue
		}
		live[f[0]] = true
		live[f[1]] = true
	}
	return live, nil
}

// noServer recognises tmux saying that no server answers: none runs, its
// socket is gone, or it is exiting (its last session just ended).
func noServer(err error) bool {
	s := err.Error()
	for _, sign := range []string{"no server running", "error connecting", "No such file or directory",
		"no current target", "no sessions", "server exited unexpectedly", "lost server", "server exited"} {
		if strings.Contains(s, sign) {
			return true
		}
	}
	return false
}

// Ended implements Ender: how the program of a dead pane ended, from
// the pane remain-on-exit kept. ok is false when the target's pane is
// gone or still runs.
func (t *Tmux) Ended(target string) (e Ending, ok bool, err error) {
	if !t.Exists(target) {
		return e, false, nil
	}
	f, err := t.deadPane(target)
	if err != nil {
		if noServer(err) || strings.Contains(err.Error(), "can't find") {
			return e, false, nil
		}
		return e, false, err
	}
	if f[0] != "1" {
		return e, false, nil
	}
	if f[1] == "" && f[2] == "" {
		// The pane's terminal closed but tmux never collected its
		// program's exit status: a zombie child of the server whose
		// SIGCHLD was lost (see reapLost). Deliver it again and read
		// the status the server then collects.
		if f, err = t.reapLost(target, f[3]); err != nil {
			return e, false, nil
		}
		if f[1] == "" && f[2] == "" {
			return e, false, nil // still not collected: not known to have ended yet
		}
	}
	e.Status = -1
	if n, err := strconv.Atoi(f[1]); err == nil {
		e.Status = n
	}
	if n, err := strconv.Atoi(f[2]); err == nil && n > 0 {
		e.Signal = n
		if e.Status < 0 {
			e.Status = 128 + n
		}
	}
	if lines, err := t.Capture(target, 200); err == nil {
		for i := len(lines) - 1; i >= 0; i-- {
			l := strings.TrimSpace(lines[i])
			if l != "" && !strings.HasPrefix(l, "Pane is dead") {
				e.LastLine = l
				break
			}
		}
	}
	return e, true, nil
}

// deadPane reads a pane's #{pane_dead}, #{pane_dead_status},
// #{pane_dead_signal} and its server's #{pid}, always four fields.
func (t *Tmux) deadPane(target string) ([]string, error) {
	out, err := t.run(nil, "display-message", "-p", "-t", tgt(target), "#{pane_dead}\t#{pane_dead_status}\t#{pane_dead_signal}\t#{pid}")
	if err != nil {
		return nil, err
	}
	f := strings.Split(strings.TrimRight(out, "\r\n"), "\t")
	for len(f) < 4 {
		f = append(f, "")
	}
	return f, nil
}

// reapLost makes the tmux server collect the exit status of a pane whose
// program ended while the server's SIGCHLD was lost, and reads the pane
// again. tmux built with libutempter (Debian's) removes a pane's utmp
// record when it reads end-of-file on the pane's terminal, and
// libutempter sets SIGCHLD to SIG_DFL while its helper runs; a program
// that ends then (its terminal closes just before it becomes a zombie)
// sends a SIGCHLD the kernel discards. The server never waits for it:
// the pane stays dead without an exit status, without the "Pane is dead"
// line, and the program stays a zombie until some other child of the
// server ends. Sending the server SIGCHLD makes it wait for every ended
// child, as tmux itself does after utempter_add_record. The server
// handles the signal in its event loop, after kill returns, so the pane
// is read again until the status is there (a few round trips at most).
func (t *Tmux) reapLost(target, serverPID string) ([]string, error) {
	pid, err := strconv.Atoi(serverPID)
	if err != nil || pid <= 1 {
		return nil, fmt.Errorf("tmux: no server pid in %q", serverPID)
	}
	if err := syscall.Kill(pid, syscall.SIGCHLD); err != nil {
		return nil, err
	}
	var f []string
	for i := 0; i < 50; i++ {
		if f, err = t.deadPane(target); err != nil || f[1] != "" || f[2] != "" {
			return f, err
		}
		time.Sleep(10 * time.Millisecond)
	}
	return f, nil
}

// Exists implements Ender: whether tmux still holds the target, its
// program running or not.
func (t *Tmux) Exists(target string) bool {
	if !strings.HasPrefix(target, "%") {
		_, err := t.run(nil, "has-session", "-t", "="+target)
		return err == nil
	}
	out, err := t.run(nil, "list-panes", "-a", "-F", "#{pane_id}")
	return err == nil && strings.Contains("\n"+out, "\n"+target+"\n")
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

// Kill implements Backend: a session rally started ends whole, with
// every process its panes started (each pane's process group and
// process tree, see endProcesses); an adopted pane ends alone.
func (t *Tmux) Kill(target string) error {
	verb, list := "kill-session", []string{"list-panes", "-s", "-t", tgt(target)}
	if strings.HasPrefix(target, "%") {
		verb, list = "kill-pane", []string{"list-panes", "-t", tgt(target)}
	}
	var pids []int
	panes := map[string]bool{}
	server := ""
	if out, err := t.run(nil, append(list, "-F", "#{pane_pid}\t#{pane_id}\t#{socket_path},#{pid},\t#{pane_dead}")...); err == nil {
		for _, line := range strings.Split(out, "\n") {
			f := strings.Split(line, "\t")
			if len(f) != 4 {
				continue
			}
			// A dead pane's pid may belong to another process by now.
			if n, err := strconv.Atoi(f[0]); err == nil && n > 1 && f[3] != "1" {
				pids = append(pids, n)
			}
			if strings.HasPrefix(target, "%") && f[1] != target {
				continue
			}
			panes[f[1]] = true
			server = f[2]
		}
	}
	// A process that left the pane's tree (a daemon) still carries the
	// pane in its environment: TMUX (socket, server pid) and TMUX_PANE.
	marked := func(environ []string) bool {
		inServer, inPane := false, false
		for _, kv := range environ {
			if v, ok := strings.CutPrefix(kv, "TMUX="); ok && server != "" && strings.HasPrefix(v, server) {
				inServer = true
			}
			if v, ok := strings.CutPrefix(kv, "TMUX_PANE="); ok && panes[v] {
				inPane = true
			}
		}
		return inServer && inPane
	}
	procs := processTree(pids, marked)
	_, err := t.run(nil, verb, "-t", tgt(target))
	if err != nil && noServer(err) {
		err = nil
	}
	endProcesses(procs)
	// What a process started while it was ending (a host runs its
	// end-of-session work) still carries the pane: end that too.
	for i := 0; i < 3 && len(panes) > 0; i++ {
		rest := processTree(nil, marked)
		if len(rest) == 0 {
			break
		}
		endProcesses(rest)
	}
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
	prog := strings.TrimSpace(out)
	if t.Keeper != "" && filepath.Base(prog) == filepath.Base(t.Keeper) {
		// the keeper holds the foreground only before its program took it
		// or after it ended: what runs there is not known yet
		return "", fmt.Errorf("the pane's program has not taken its terminal yet")
	}
	return prog, nil
}
