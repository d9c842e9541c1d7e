package refs

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// GitError is a failed git command: its arguments, exit code and stderr.
type GitError struct {
	Args   []string
	Code   int
	Stderr string
}

func (e *GitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = fmt.Sprintf("exit status %d", e.Code)
	}
	return fmt.Sprintf("git %s: %s", strings.Join(e.Args, " "), msg)
}

// Git runs the git command line in dir; it is the one place rally shells
// out, for what go-git cannot do well (worktree add, merge-tree, fetch and
// push with the user's credentials). env entries are added to the
// environment. It returns stdout.
func Git(dir string, env []string, args ...string) (string, error) {
	return GitInput(dir, env, nil, args...)
}

// GitCount counts the git processes this process started; benchmarks and
// tests use it to show that work stays linear.
var GitCount int

var gitCountMu sync.Mutex

// countGit counts a git process; cat-file streams start several at once.
func countGit() {
	gitCountMu.Lock()
	GitCount++
	gitCountMu.Unlock()
}

// GitInput is Git with stdin.
func GitInput(dir string, env []string, stdin []byte, args ...string) (string, error) {
	return runGit(dir, env, stdin, nil, args)
}

// GitProgress is Git that also copies git's stderr to progress as it
// comes (fetch and push print their progress there); stderr is still
// captured for the error.
func GitProgress(dir string, env []string, progress io.Writer, args ...string) (string, error) {
	return runGit(dir, env, nil, progress, args)
}

func runGit(dir string, env []string, stdin []byte, progress io.Writer, args []string) (string, error) {
	countGit()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errb
	if progress != nil {
		cmd.Stderr = io.MultiWriter(&errb, progress)
	}
	if err := cmd.Run(); err != nil {
		code := -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			return "", fmt.Errorf("running git: %w", err)
		}
		// The -c options rally adds (PackWindows) are not what the user
		// needs to read in an error.
		shown := args
		for len(shown) >= 2 && shown[0] == "-c" {
			shown = shown[2:]
		}
		return out.String(), &GitError{Args: shown, Code: code, Stderr: errb.String()}
	}
	return out.String(), nil
}

// startGit starts git in dir in the background, in a session of its own
// (it outlives rally and a terminal's Ctrl-C), its output discarded.
func startGit(dir string, args ...string) error {
	countGit()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("running git: %w", err)
	}
	return cmd.Process.Release()
}

// windows are the pack windows of the store's readers of many objects:
// Windows, else PackWindows.
func (st *Store) windows() []string {
	if st.Windows != nil {
		return slices.Clip(st.Windows)
	}
	return PackWindows()
}

// startCatFile starts `git cat-file` with args (--batch and its options)
// in the common dir, reading in pack windows, with pipes to its stdin and
// from its stdout and its stderr into errb: the long-lived readers of many
// objects (ObjectReader, BlobStream) ask it one object id a line.
func (st *Store) startCatFile(errb *bytes.Buffer, args ...string) (*exec.Cmd, io.WriteCloser, io.ReadCloser, error) {
	countGit()
	cmd := exec.Command("git", append(append(st.windows(), "cat-file"), args...)...)
	cmd.Dir = st.CommonDir
	cmd.Env = append(os.Environ(), "GIT_DIR="+st.CommonDir)
	cmd.Stderr = errb
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("running git: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("running git: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, nil, fmt.Errorf("running git: %w", err)
	}
	return cmd, in, out, nil
}

// GitStream runs git with stdin and hands its stdout to read as it comes,
// so a large answer (cat-file --batch of a whole ledger) is consumed
// while git still produces it, and never held whole.
func GitStream(dir string, env []string, stdin []byte, read func(io.Reader) error, args ...string) error {
	return gitStreamFrom(dir, env, bytes.NewReader(stdin), read, args...)
}

// gitStreamFrom is GitStream with its input read from stdin.
func gitStreamFrom(dir string, env []string, stdin io.Reader, read func(io.Reader) error, args ...string) error {
	countGit()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdin = stdin
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("running git: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("running git: %w", err)
	}
	rerr := read(out)
	if rerr != nil {
		io.Copy(io.Discard, out) // let git finish writing
	}
	if err := cmd.Wait(); err != nil {
		code := -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		if rerr == nil {
			return &GitError{Args: args, Code: code, Stderr: errb.String()}
		}
	}
	return rerr
}
