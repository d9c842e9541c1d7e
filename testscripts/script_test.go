package testscripts

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/git-rally/git-rally/cmd/git-rally-server/server"
	"github.com/git-rally/git-rally/cmd/git-rally/cli"
)

func TestMain(m *testing.M) {
	os.Setenv("RALLY_AUTOPACK", "0") // for the tests that run the binary directly
	testscript.Main(m, map[string]func(){
		"git-rally":        func() { os.Exit(cli.Main()) },
		"git-rally-server": func() { os.Exit(cli.ServerMain(server.Parts)) },
	})
}

func TestScripts(t *testing.T) {
	testscript.Run(t, Params("testdata"))
}

// Params are the shared testscript settings: a private HOME with a git
// identity, and the custom commands.
func Params(dir string) testscript.Params {
	return testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			home := filepath.Join(env.WorkDir, "home")
			if err := os.MkdirAll(home, 0o777); err != nil {
				return err
			}
			env.Setenv("HOME", home)
			env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			env.Setenv("GIT_AUTHOR_NAME", "Test")
			env.Setenv("GIT_AUTHOR_EMAIL", "test@example.com")
			env.Setenv("GIT_COMMITTER_NAME", "Test")
			env.Setenv("GIT_COMMITTER_EMAIL", "test@example.com")
			env.Setenv("RALLY_TOOL", "")
			env.Setenv("RALLY_SESSION", "")
			env.Setenv("RALLY_NOW", "")
			env.Setenv("TZ", "UTC")           // human output shows local times
			env.Setenv("RALLY_AUTOPACK", "0") // no background repack racing the cleanup
			if err := setupTmux(env); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(home, ".gitconfig"),
				[]byte("[init]\n\tdefaultBranch = main\n[user]\n\tname = Test\n\temail = test@example.com\n[advice]\n\tdetachedHead = false\n"), 0o666)
		},
		// [ci]: CI=true, where a test needing a program CI installs must
		// not skip ([!exec:ssh-keygen] [!ci] skip). [gitexec:<program>]:
		// git has the program in its --exec-path (git-daemon).
		Condition: func(cond string) (bool, error) {
			if cond == "ci" {
				return os.Getenv("CI") == "true", nil
			}
			if name, ok := strings.CutPrefix(cond, "gitexec:"); ok {
				return gitProgram(name)
			}
			if cond == "tmux" {
				return tmuxCondition()
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode":  cmdExitcode,
			"envsubst":  cmdEnvsubst,
			"gitdaemon": cmdGitDaemon,
			"githttp":   cmdGitHTTP,
			"waitfor":   cmdWaitFor,
			"readenv":   cmdReadEnv,
		},
	}
}

// cmdExitcode runs a program and checks its exact exit code:
//
//	exitcode 3 git-rally claim src/a.go
func cmdExitcode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode <code> <program> [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: bad code %q", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("exit code %d, want %d", got, want)
	}
}
