package cli

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"github.com/git-rally/git-rally/hooks"
)

func newCmdHook(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "hook <host> <event>",
		Short: "Answer a hook call from git or an agent host (what `git rally hooks install` registers)",
		Long: `git rally hook is what installed hooks run: "git-rally hook git pre-commit",
"git-rally hook claude|codex session-start|pre-tool-use|user-prompt-submit|session-end",
"git-rally hook gemini session-start|before-tool|after-tool|before-agent|session-end",
"git-rally hook cursor session-start|pre-tool-use|before-shell-execution|after-file-edit|session-end".
It reads the host's JSON on stdin and answers in the host's JSON.

It fails open: malformed input, an unknown host or event, or a missing ledger
answer "allow" and say nothing. RALLY_HOOK_STRICT=1 turns a stop finding of
the write check into a denial (git: also git config rally.strict true);
RALLY_HOOKS=off silences every hook.`,
		// Flags are not parsed: a host must never get a usage error
		// (exit 2 would block its tool call).
		DisableFlagParsing: true,
		RunE: func(c *cobra.Command, args []string) error {
			for _, a := range args {
				if a == "-h" || a == "--help" {
					return c.Help()
				}
			}
			return runHook(f.Factory, args)
		},
	}
}

// maxHookInput bounds what a hook reads from its host (a Write carries
// the whole file).
const maxHookInput = 32 << 20

// hotGCPercent is GOGC for the hot commands: one lives for milliseconds,
// and collecting while it encodes a large room costs more than the memory
// a collection would free (a rebuild lowers it again).
const hotGCPercent = 400

// runHook answers a hook call: `git-rally hook <host> <event> [args]`,
// the host's JSON on f.In. It fails open; its only error is an
// *cmdutil.ExitError with the code the host's protocol asks for.
func runHook(f *cmdutil.Factory, args []string) error {
	if len(args) < 2 || (len(args) > 2 && args[0] != hooks.Git) {
		fmt.Fprintln(f.Err, "git-rally: warning: usage: git rally hook <host> <event>; nothing checked")
		return nil
	}
	now, err := f.Now()
	if err != nil {
		now = time.Now().UTC()
	}
	var input []byte
	if args[0] != hooks.Git || args[1] == "pre-push" {
		input = readHookInput(f.In)
	}
	wd, _ := os.Getwd()
	ans := hooks.Handle(hooks.Invocation{Host: args[0], Event: args[1], Input: input, Dir: wd,
		Getenv: os.Getenv, Now: now, Identity: f.Identity, Args: args[2:],
		Repo: f.RepoAt, Ledger: f.LedgerOf})
	f.Out.Write(ans.Stdout)
	f.Err.Write(ans.Stderr)
	if ans.Code != 0 {
		return &cmdutil.ExitError{Code: ans.Code}
	}
	return nil
}

// readHookInput reads the host's JSON; a terminal (someone trying the
// command by hand) gives none rather than a hang.
func readHookInput(in io.Reader) []byte {
	if file, ok := in.(*os.File); ok {
		if fi, err := file.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			return nil
		}
	}
	b, _ := io.ReadAll(io.LimitReader(in, maxHookInput))
	return b
}
