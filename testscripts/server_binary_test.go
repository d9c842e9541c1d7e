package testscripts

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// git rally serve runs in git-rally-server: git-rally passes it the
// arguments and streams, hands on a Ctrl-C or a host's SIGTERM sent to
// git-rally alone, and exits with the server's status once it has stopped.
func TestServeRunsInTheServerBinary(t *testing.T) {
	prefix := installedBinary(t)
	env := userEnv(t, prefix)
	dir := t.TempDir()
	for _, args := range [][]string{{"git", "init", "-q"}, {filepath.Join(prefix, "bin", "git-rally"), "init"}} {
		c := exec.Command(args[0], args[1:]...)
		c.Dir, c.Env = dir, env
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		c := exec.Command(filepath.Join(prefix, "bin", "git-rally"), "serve", "--addr", "127.0.0.1:0")
		c.Dir, c.Env = dir, env
		// Its own process group, so that whatever it leaves behind when
		// this test fails is killed with it, and nothing else.
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		out, err := c.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		pgid := c.Process.Pid
		t.Cleanup(func() { syscall.Kill(-pgid, syscall.SIGKILL) })
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "http://127.0.0.1:") {
			c.Process.Kill()
			t.Fatalf("serve printed %q (%v), want its URL", line, err)
		}
		c.Process.Signal(sig) // git-rally alone, not its process group
		done := make(chan error, 1)
		go func() { done <- c.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve after %v: %v, want exit 0 (the server stopped cleanly)", sig, err)
			}
		case <-time.After(30 * time.Second):
			c.Process.Kill()
			t.Fatalf("serve did not stop within 30 s of %v", sig)
		}
	}
}
