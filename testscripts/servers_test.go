package testscripts

import (
	"fmt"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// Git servers for the sync scripts: git daemon (git://) and smart HTTP
// (git http-backend behind net/http/cgi). Each listens on 127.0.0.1 only,
// stops when the script ends (ts.Defer) and after serverLife at the
// latest, whatever the script does.
const serverLife = 3 * time.Minute

// gitProgram reports whether one of git's own programs (git-daemon,
// git-http-backend) is in `git --exec-path`.
func gitProgram(name string) (bool, error) {
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		return false, fmt.Errorf("git --exec-path: %v", err)
	}
	_, err = os.Stat(filepath.Join(strings.TrimSpace(string(out)), name))
	return err == nil, nil
}

func needGitProgram(ts *testscript.TestScript, name string) {
	ok, err := gitProgram(name)
	if err != nil || !ok {
		ts.Fatalf("%s is not in git --exec-path (%v): install git's full package", name, err)
	}
}

// serverEnv is the script's git environment for a server process: its
// private HOME and no system config.
func serverEnv(ts *testscript.TestScript) []string {
	env := []string{"HOME=" + ts.Getenv("HOME"), "GIT_CONFIG_NOSYSTEM=1"}
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "HOME=") && !strings.HasPrefix(e, "GIT_") {
			env = append(env, e)
		}
	}
	return env
}

// cmdGitDaemon serves the repositories under a directory over git:// with
// receive-pack enabled and sets $GITDAEMON_URL (git://127.0.0.1:<port>):
//
//	gitdaemon srv
//	exec git remote add origin $GITDAEMON_URL/origin.git
func cmdGitDaemon(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: gitdaemon <base-path>")
	}
	needGitProgram(ts, "git-daemon")
	base := ts.MkAbs(args[0])
	// git daemon takes a port number, not a listener: take a free one and
	// retry on the rare race with another process that takes it first.
	for try := 0; try < 5; try++ {
		port, err := freePort()
		if err != nil {
			ts.Fatalf("gitdaemon: %v", err)
		}
		cmd := exec.Command("git", "daemon", "--listen=127.0.0.1", "--port="+strconv.Itoa(port),
			"--export-all", "--enable=receive-pack", "--base-path="+base, "--reuseaddr", "--informative-errors",
			"--init-timeout=10", "--timeout=60", "--max-connections=64")
		cmd.Env = serverEnv(ts)
		cmd.Dir = base
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its children go with it
		var logb strings.Builder
		cmd.Stderr = &logb
		if err := cmd.Start(); err != nil {
			ts.Fatalf("gitdaemon: %v", err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		stop := func() {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		if !awaitListening(port, exited) {
			stop()
			ts.Logf("gitdaemon on port %d did not start: %s", port, logb.String())
			continue
		}
		life := time.AfterFunc(serverLife, stop)
		ts.Defer(func() {
			life.Stop()
			stop()
		})
		ts.Setenv("GITDAEMON_URL", fmt.Sprintf("git://127.0.0.1:%d", port))
		return
	}
	ts.Fatalf("gitdaemon: could not start git daemon")
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// awaitListening waits up to 10 s for a connection to the port to succeed,
// or the process to exit.
func awaitListening(port int, exited <-chan struct{}) bool {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return false
		default:
		}
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			c.Close()
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// cmdGitHTTP serves the repositories under a directory over smart HTTP
// (git http-backend as a CGI program, GIT_HTTP_EXPORT_ALL) and sets
// $GITHTTP_URL (http://127.0.0.1:<port>). Pushing needs http.receivepack
// true in the served repository (no user is authenticated):
//
//	githttp srv
//	exec git -C srv/origin.git config http.receivepack true
func cmdGitHTTP(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: githttp <project-root>")
	}
	needGitProgram(ts, "git-http-backend")
	gitPath, err := exec.LookPath("git")
	if err != nil {
		ts.Fatalf("githttp: %v", err)
	}
	root := ts.MkAbs(args[0])
	h := &cgi.Handler{
		Path: gitPath,
		Args: []string{"http-backend"},
		Dir:  root,
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1",
			"HOME=" + ts.Getenv("HOME"), "GIT_CONFIG_NOSYSTEM=1"},
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		ts.Fatalf("githttp: %v", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		WriteTimeout: time.Minute, IdleTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() { srv.Serve(l); close(done) }()
	stop := func() {
		srv.Close()
		<-done
	}
	life := time.AfterFunc(serverLife, stop)
	ts.Defer(func() {
		life.Stop()
		stop()
	})
	ts.Setenv("GITHTTP_URL", "http://"+l.Addr().String())
}
