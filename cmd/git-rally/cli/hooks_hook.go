package cli

import (
	"github.com/spf13/cobra"
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
			return RunHook(f.Factory, args)
		},
	}
}
