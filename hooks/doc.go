// Package hooks owns rally's hooks: the git pre-commit check and the agent
// hosts' hooks (Claude Code, Codex, Gemini CLI, Cursor). It installs and removes
// them without disturbing what else is there (a user's own pre-commit hook
// is chained and restored byte for byte; settings files are merged key by
// key), and it answers one hook invocation: `git-rally hook <host> <event>`
// reads the host's JSON, consults the room and answers in the host's JSON.
//
// Hooks fail open: a missing ledger, malformed input or an internal error
// never blocks an edit or a commit; only strict mode turns a stop finding
// of the write check into a denial. docs/hooks.md says what each host's
// hooks do and what of a shell command can and cannot be read.
package hooks
