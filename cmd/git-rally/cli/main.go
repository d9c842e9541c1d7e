// Package cli is git-rally's command line: the cobra tree, flags, output,
// --json/--query, and the one place errors become text and exit codes.
package cli

import (
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"github.com/git-rally/git-rally/facts"
	// SSH signatures (refs.SSH) for every command: refs and facts reach
	// the SSH library only through it.
	_ "github.com/git-rally/git-rally/sshsig"
)

// Exit codes.
const (
	ExitOK      = cmdutil.ExitOK
	ExitError   = cmdutil.ExitFailure
	ExitUsage   = cmdutil.ExitUsage
	ExitRefused = cmdutil.ExitRefused
	ExitStop    = cmdutil.ExitStop
)

// usageError is bad command-line input.
type usageError = cmdutil.UsageError

func usagef(format string, a ...any) error { return cmdutil.Usagef(format, a...) }

// exitError carries an exit code with no message (check --strict).
type exitError = cmdutil.ExitError

// Main runs the command line and returns the exit code.
func Main() int {
	return Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
}

// Run runs one command with the given arguments and streams.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return run(args, stdin, stdout, stderr, nil)
}

// run is Run in git-rally (server nil) or git-rally-server.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, server *Server) int {
	f := newFactory(stdin, stdout, stderr)
	f.args, f.server = args, server
	root := newTree(f, args)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	return f.Finish(args, root.Execute())
}

// hotCommands are the commands agents and hooks run before every write.
// For them Run builds the root with that one command: the whole tree (70
// commands, their flags, completion, examples) costs 0.4 ms to build, more
// than a claim's rule check. A hot command's behaviour is the same in both
// trees (TestHotCommandsBehaveAsInTheFullTree); help, completion and
// --version always get the full tree.
var hotCommands = map[string]func(*factory) *cobra.Command{
	"claim": newCmdClaim, "release": newCmdRelease, "check": newCmdCheck, "hook": newCmdHook,
	"note": func(f *factory) *cobra.Command { return newCmdSimple(f, facts.KindNote) },
	"room": newCmdRoom, "whoami": newCmdWhoami, "inbox": newCmdInbox, "next": newCmdNext,
	"enter": newCmdEnter, "leave": newCmdLeave, "log": newCmdLog, "show": newCmdShow,
	"version": newCmdVersion,
}

// fullTree forces the whole tree (tests compare the two).
var fullTree = false

// isHot reports whether newTree runs args in the hot tree.
func isHot(args []string) bool {
	if len(args) == 0 || fullTree {
		return false
	}
	_, ok := hotCommands[args[0]]
	return ok && !wantsHelp(args)
}

// newTree returns the command tree Run executes args with.
func newTree(f *factory, args []string) *cobra.Command {
	if isHot(args) {
		// A hot command lives for milliseconds: collecting while it
		// encodes a large room costs more than the memory a collection
		// would free (a rebuild lowers it again).
		debug.SetGCPercent(HotGCPercent)
		root := newRoot(f)
		root.AddCommand(hotCommands[args[0]](f))
		guardGroups(root)
		return root
	}
	return newRootCmd(f)
}

// wantsHelp reports whether args ask for help, completion or the version,
// which list or describe the whole tree.
func wantsHelp(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		switch {
		case a == "-h", a == "--help", a == "--version", a == "help", strings.HasPrefix(a, "__complete"):
			return true
		case strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "h"):
			return true // -h among short flags, e.g. -jh
		}
	}
	return false
}

// newRoot returns the root command with its persistent flags, no
// subcommands.
func newRoot(f *factory) *cobra.Command {
	root := &cobra.Command{
		Use:           "git-rally",
		Short:         "Agents sharing one repository: a ledger of facts in git, and the room it describes",
		SilenceErrors: true,
		SilenceUsage:  true,
		Long: `git rally lets several coding agents work in one repository without stepping
on each other. They append small facts (presence, claims on paths, handoffs,
receipts, retractions) to a ledger stored in git on refs/rally/ledger, and read
the room: who is here, who holds what, what waits for whom.

Identity: --tool, else $RALLY_TOOL, else git config rally.tool, else the
session bound to the current rally worktree. $RALLY_NOW (RFC 3339) sets the
current time.`,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &usageError{Msg: err.Error(), Hint: helpHint(c)}
	})
	root.PersistentFlags().Var(&toolsValue{f}, "tool", "author identity, e.g. claude_code:impl-1")
	root.PersistentFlags().Var(&f.Color, "color", "colour the human output: auto (on a terminal, unless NO_COLOR), always, never")
	root.PersistentFlags().Lookup("color").NoOptDefVal = "always"
	root.PersistentFlags().BoolVar(&f.noPager, "no-pager", false, "do not page log output")
	root.PersistentPreRunE = checkQuery
	return root
}

func newRootCmd(f *factory) *cobra.Command {
	root := newRoot(f)
	root.AddCommand(
		newCmdInit(f), newCmdEnter(f), newCmdLeave(f), newCmdWhoami(f),
		newCmdClaim(f), newCmdRelease(f), newCmdCheck(f),
		newCmdHandoff(f), newCmdAnswer(f, facts.KindReceipt), newCmdAnswer(f, facts.KindResolve), newCmdArtifact(f),
		newCmdSimple(f, facts.KindNote), newCmdSimple(f, facts.KindBlocker), newCmdSimple(f, facts.KindRisk), newCmdSimple(f, facts.KindDecision),
		newCmdRetract(f), newCmdSay(f),
		newCmdRoom(f), newCmdInbox(f), newCmdNext(f), newCmdLog(f), newCmdShow(f), newCmdDoctor(f),
		newCmdDemo(f), newCmdVersion(f), newCmdMan(f), newCmdDeinit(f),
	)
	for _, c := range extraCommands {
		root.AddCommand(c(f))
	}
	root.AddCommand(newCmdPlanYAML(f))
	setVersion(root)
	root.SetHelpCommand(newCmdHelp())
	typedHelp(root)
	root.InitDefaultCompletionCmd()
	extendCompletion(f, root)
	guardGroups(root)
	addExamples(root)
	return root
}

// extraCommands lets command families in their own files register.
var extraCommands []func(*factory) *cobra.Command
