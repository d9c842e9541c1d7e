package cli

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"github.com/git-rally/git-rally/refs"
)

// startPager sends stdout through the pager as git does: only when stdout
// is a terminal and --no-pager is not given; the pager is $GIT_PAGER, else
// git config core.pager, else $PAGER, else less, with LESS=FRX (quit when
// it fits, keep colour, no screen clearing) unless LESS is set; "cat" or
// an empty pager means none. Like git, it runs the pager's command line
// through the shell: it is the user's own command line. The returned
// function waits for the pager to finish.
func (f *factory) startPager() func() {
	if f.noPager || !outTerminal(f.Out) {
		return func() {}
	}
	pager := os.Getenv("GIT_PAGER")
	if pager == "" {
		if r, err := f.Repo(); err == nil {
			if out, err := refs.Git(r.Dir(), nil, "config", "--get", "core.pager"); err == nil {
				pager = strings.TrimSpace(out)
			}
		}
	}
	if pager == "" {
		pager = os.Getenv("PAGER")
	}
	if pager == "" {
		pager = "less"
	}
	if pager == "cat" || strings.TrimSpace(pager) == "" {
		return func() {}
	}
	cmd := exec.Command("sh", "-c", pager)
	cmd.Stdout, cmd.Stderr = f.Out, f.Err
	cmd.Env = os.Environ()
	if os.Getenv("LESS") == "" {
		cmd.Env = append(cmd.Env, "LESS=FRX")
	}
	if os.Getenv("LV") == "" {
		cmd.Env = append(cmd.Env, "LV=-c")
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return func() {}
	}
	if err := cmd.Start(); err != nil {
		return func() {}
	}
	// Colour decided for the terminal stays on through the pager.
	f.ColorOn()
	out := f.Out
	f.Out = &pagerPipe{w: in}
	return func() {
		in.Close()
		cmd.Wait()
		f.Out = out
	}
}

// pagerPipe is the pager's standard input. A pager that quits before the
// output ends (q in less) closes the pipe: the rest of the output is
// dropped, and the command still succeeds. Git dies of SIGPIPE there
// (status 141) without a word; a Go process ignores SIGPIPE on a pipe that
// is not its stdout and got EPIPE, which it reported as "write |1: broken
// pipe", exit 1, whenever the pager was gone before the first write.
type pagerPipe struct {
	w    io.Writer
	gone bool
}

func (p *pagerPipe) Write(b []byte) (int, error) {
	if p.gone {
		return len(b), nil
	}
	n, err := p.w.Write(b)
	if errors.Is(err, syscall.EPIPE) {
		p.gone = true
		return len(b), nil
	}
	return n, err
}
