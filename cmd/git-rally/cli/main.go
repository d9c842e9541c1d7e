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
	"github.com/git-rally/git-rally/session"
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
	if len(os.Args) > 2 && os.Args[1] == session.KeeperArg && os.Args[2] == "--" {
		// the program of a pane rally started (session.Keep)
		return session.Keep(os.Args[3:])
	}
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
	if err := unknownCommand(root, args); err != nil {
		return f.Finish(args, err)
	}
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	return f.Finish(args, root.Execute())
}

// commands is every top-level command, the one list of them. hot marks
// the ones agents and hooks run before every write: for them Run builds
// the root with that one command, since the whole tree (70 commands, their
// flags, completion, examples) costs 0.4 ms to build, more than a claim's
// rule check. A hot command behaves the same in both trees
// (TestHotCommandsBehaveAsInTheFullTree); help, completion and --version
// always get the full tree.
func commands() []command {
	return []command{
		{"init", false, newCmdInit},
		{"enter", true, newCmdEnter},
		{"leave", true, newCmdLeave},
		{"whoami", true, newCmdWhoami},
		{"claim", true, newCmdClaim},
		{"release", true, newCmdRelease},
		{"check", true, newCmdCheck},
		{"handoff", false, newCmdHandoff},
		{"receipt", false, func(f *factory) *cobra.Command { return newCmdAnswer(f, facts.KindReceipt) }},
		{"resolve", false, func(f *factory) *cobra.Command { return newCmdAnswer(f, facts.KindResolve) }},
		{"artifact", false, newCmdArtifact},
		{"note", true, func(f *factory) *cobra.Command { return newCmdSimple(f, facts.KindNote) }},
		{"blocker", false, func(f *factory) *cobra.Command { return newCmdSimple(f, facts.KindBlocker) }},
		{"risk", false, func(f *factory) *cobra.Command { return newCmdSimple(f, facts.KindRisk) }},
		{"decision", false, func(f *factory) *cobra.Command { return newCmdSimple(f, facts.KindDecision) }},
		{"lead", false, newCmdLead},
		{"status", false, newCmdStatus},
		{"retract", false, newCmdRetract},
		{"say", false, newCmdSay},
		{"room", true, newCmdRoom},
		{"inbox", true, newCmdInbox},
		{"next", true, newCmdNext},
		{"log", true, newCmdLog},
		{"show", true, newCmdShow},
		{"doctor", false, newCmdDoctor},
		{"demo", false, newCmdDemo},
		{"version", true, newCmdVersion},
		{"man", false, newCmdMan},
		{"deinit", false, newCmdDeinit},
		{"hook", true, newCmdHook},
		{"hooks", false, newCmdHooks},
		{"run", false, newCmdRun},
		{"sessions", false, newCmdSessions},
		{"inject", false, newCmdInject},
		{"capture", false, newCmdCapture},
		{"attach", false, newCmdAttach},
		{"stop", false, newCmdStop},
		{"adopt", false, newCmdAdopt},
		{"watch", false, newCmdWatch},
		{"sync", false, newCmdSync},
		{"checkpoint", false, newCmdCheckpoint},
		{"worktree", false, newCmdWorktree},
		{"plan", false, newCmdPlan},
		{"serve", false, newCmdServe},
		{"mcp", false, newCmdMCP},
		{planYAMLCommand, false, newCmdPlanYAML},
	}
}

type command struct {
	name string
	hot  bool
	new  func(*factory) *cobra.Command
}

// fullTree forces the whole tree (tests compare the two).
var fullTree = false

// isHot reports whether newTree runs args in the hot tree.
func isHot(args []string) bool {
	if len(args) == 0 || fullTree {
		return false
	}
	return hotCommand(args[0]) != nil && !wantsHelp(args)
}

// hotCommand is the hot command called name, else nil.
func hotCommand(name string) func(*factory) *cobra.Command {
	for _, c := range commands() {
		if c.hot && c.name == name {
			return c.new
		}
	}
	return nil
}

// newTree returns the command tree Run executes args with.
func newTree(f *factory, args []string) *cobra.Command {
	if isHot(args) {
		// A hot command lives for milliseconds: collecting while it
		// encodes a large room costs more than the memory a collection
		// would free (a rebuild lowers it again).
		debug.SetGCPercent(hotGCPercent)
		root := newRoot(f)
		// cobra would build its completion command (a fifth of a hot
		// command's own CPU time) on every Execute; completion gets the
		// full tree.
		root.CompletionOptions.DisableDefaultCmd = true
		root.AddCommand(hotCommand(args[0])(f))
		guardGroups(root)
		typedArgs(root)
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
		if h, ok := flagHints[cmdName(c)+" "+strings.TrimPrefix(err.Error(), "unknown flag: ")]; ok {
			return &usageError{Msg: err.Error() + "; " + h[0], Hint: h[1]}
		}
		return &usageError{Msg: err.Error(), Hint: helpHint(c)}
	})
	root.PersistentFlags().Var(&toolsValue{f}, "tool", "author identity, e.g. claude_code:impl-1")
	root.PersistentFlags().Var(&f.Color, "color", "colour the human output: auto (on a terminal, unless NO_COLOR), always, never")
	root.PersistentFlags().Lookup("color").NoOptDefVal = "always"
	root.PersistentFlags().BoolVar(&f.noPager, "no-pager", false, "do not page log output")
	root.PersistentPreRunE = func(c *cobra.Command, args []string) error {
		if err := checkFlagGroups(c); err != nil {
			return err
		}
		return checkQuery(c, args)
	}
	return root
}

// flagHints explain a flag a newcomer expects and rally does not have:
// what to type instead (message tail, hint).
var flagHints = map[string][2]string{
	"git rally release --all": {"release names ids or scopes; leaving closes every claim you hold", "git rally leave (closes all your claims), or git rally release <scope-or-claim-id>..."},
}

func newRootCmd(f *factory) *cobra.Command {
	root := newRoot(f)
	for _, c := range commands() {
		root.AddCommand(c.new(f))
	}
	setVersion(root)
	root.SetHelpCommand(newCmdHelp())
	typedHelp(root)
	root.InitDefaultCompletionCmd()
	extendCompletion(f, root)
	guardGroups(root)
	typedArgs(root)
	addExamples(root)
	return root
}
