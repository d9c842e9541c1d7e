// Package early answers `git-rally hook` from an init, before main and
// before cobra initialises. A hook runs before every write an agent
// makes. Go initialises a package after the packages it imports and
// otherwise in import-path order; a command run from cobra waits for
// text/template, which sorts after nearly every package in the binary,
// so it starts only once the MCP SDK, the YAML parser and the rest have
// initialised too. This package imports neither cobra nor anything only
// the servers need, so its init runs as soon as the ledger's own
// packages are ready (bench/run.sh's probes show what that saves).
//
// It answers exactly as the cobra tree's hook command does
// (TestEarlyHookBehavesAsTheCobraTree); anything it is not sure of (help,
// a flag) it leaves to the tree, and so it does when the repository signs
// or verifies facts: refs and facts reach the SSH code through refs.SSH,
// which package sshsig installs from an init that runs after this one.
package early

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"github.com/git-rally/git-rally/refs"
)

func init() {
	if code, ok := Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr); ok {
		os.Exit(code)
	}
}

// Run answers args when they are a hook call, as cli.Run would: the
// host's answer, the ledger's warnings, the exit code. It reports false,
// having done nothing, for anything else.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) (int, bool) {
	if len(args) == 0 || args[0] != "hook" {
		return 0, false
	}
	for _, a := range args[1:] {
		if a == "help" || strings.HasPrefix(a, "-") || strings.HasPrefix(a, "__") {
			return 0, false // help, completion, a flag: the cobra tree's
		}
	}
	f := cmdutil.New(stdin, stdout, stderr)
	if l, err := f.Ledger(); err == nil && l.Signing.Verifying() && refs.SSH == nil {
		// Signing or verification is configured, and package sshsig
		// initialises after this one: the tree answers.
		f.Close()
		return 0, false
	}
	debug.SetGCPercent(cmdutil.HotGCPercent)
	err := cmdutil.RunHook(f, args[1:])
	f.Close()
	for _, w := range f.Warnings() {
		fmt.Fprintf(stderr, "git-rally: warning: %s\n", w)
	}
	var ee *cmdutil.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.Code, true
	case err != nil: // RunHook fails open and has no other error
		fmt.Fprintf(stderr, "git-rally: error: %s\n", err)
		return cmdutil.ExitFailure, true
	}
	return 0, true
}
