package cli

import (
	"strings"
	"sync"

	"github.com/spf13/cobra"
)

// examples are the Examples of each command's help (and man page), by the
// command as typed after "git rally". A command that sets its own Example
// keeps it.
var examples = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"": `  git rally init
  git rally claim src/api.ts --tool codex:impl-1
  git rally room
  git rally help claim`,
		"init": `  git rally init
  git rally init --remote origin`,
		"enter": `  git rally enter --tool codex:impl-1 --subject "fixing the parser"`,
		"leave": `  git rally leave --tool codex:impl-1`,
		"whoami": `  git rally whoami
  RALLY_TOOL=codex:impl-1 git rally whoami --json`,
		"claim": `  git rally claim src/api.ts
  git rally claim src/ui/ port:8080 --subject "new checkout page"
  git rally claim 'glob:src/**/*.test.ts' --shared --lease 45m
  git rally claim src/api.ts --takeover`,
		"release": `  git rally release src/api.ts
  git rally release f_8a4f62 --reason done`,
		"check": `  git rally check before-write src/api.ts --strict
  git rally check before-complete --strict`,
		"check before-write": `  git rally check before-write src/api.ts src/ui/
  git rally check before-write port:8080 --json
  git rally check before-write src/api.ts --strict || echo "someone holds it"`,
		"check before-complete": `  git rally check before-complete
  git rally check before-complete --strict --json`,
		"handoff": `  git rally handoff --target codex:verify-1 --subject "review the parser" --file src/p.go --ack-within 30m
  git rally handoff --target all --subject "who takes the docs?"`,
		"receipt": `  git rally receipt $(git rally inbox --query items.0.id)
  git rally receipt f_8a4f62`,
		"resolve": `  git rally resolve f_8a4f62 --subject "merged in 3c1e2a"
  git rally resolve f_b10c4e   # lift a blocker`,
		"artifact": `  git rally artifact --ref f_8a4f62 --subject "review done" --uri https://example.com/pr/12
  git rally artifact --target codex:impl-1 --subject "benchmarks" --evidence "p50 4ms"`,
		"note":     `  git rally note --subject "the CI runner is slow today"`,
		"blocker":  `  git rally blocker --subject "schema migration in progress" --scope src/db/ --severity high`,
		"risk":     `  git rally risk --subject "flaky test in ledger_test.go" --severity warn`,
		"decision": `  git rally decision --subject "use gjson for --query" --status binding`,
		"retract":  `  git rally retract f_8a4f62 --reason "wrong file"`,
		"say": `  git rally say claim --path src/api.ts
  git rally say handoff --target codex:verify-1 --subject "review"
  git rally say receipt --ref f_8a4f62`,
		"room": `  git rally room
  git rally room --json
  git rally room --compact --path src/api.ts --tool codex:impl-1
  git rally room --query 'claims.#(tool=="codex:impl-1")#.scopes'`,
		"inbox": `  git rally inbox
  git rally inbox --query items.0.id
  git rally inbox --tool codex:verify-1 --json`,
		"next": `  git rally next
  git rally next --dry-run --json`,
		"log": `  git rally log
  git rally log --kind claim --tool codex:impl-1 -n 20
  git rally log --no-pager --json`,
		"show": `  git rally show f_8a4f62
  git rally show f_8a4f62 --query scopes`,
		"doctor": `  git rally doctor
  git rally doctor --reap-stale
  git rally doctor --reap-stale --apply`,
		"demo": `  git rally demo
  git rally demo --agents 3 --overlap --handoff --json`,
		"sync": `  git rally sync
  git rally sync upstream --no-push`,
		"hooks": `  git rally hooks install
  git rally hooks status`,
		"hooks install": `  git rally hooks install            # git, Claude Code and Codex
  git rally hooks install --git      # the pre-commit and pre-push checks only`,
		"hooks uninstall": `  git rally hooks uninstall`,
		"hooks status":    `  git rally hooks status --json`,
		"hook":            `  echo '{"tool_name":"Edit","tool_input":{"file_path":"src/a.go"}}' | git rally hook claude PreToolUse`,
		"worktree": `  git rally worktree add parser
  git rally worktree plan`,
		"worktree add": `  git rally worktree add parser --tool codex:impl-1
  git rally worktree add docs --base release-1.2`,
		"worktree list": `  git rally worktree list --json`,
		"worktree plan": `  git rally worktree plan
  git rally worktree plan --base main --json`,
		"worktree remove": `  git rally worktree remove parser
  git rally worktree remove parser --force`,
		"help": `  git rally help claim
  git rally help hooks install`,
		"completion": `  source <(git rally completion bash)
  git rally completion zsh > "${fpath[1]}/_git-rally"
  git rally completion fish > ~/.config/fish/completions/git-rally.fish`,
		"run": `  git rally run claude --task "fix the flaky ledger test"
  git rally run codex --name verify --scope src/api/ --dry-run --json`,
		"sessions": `  git rally sessions
  git rally sessions --json`,
		"inject": `  git rally inject verify --handoff f_8a4f62
  git rally inject verify --text "the API moved to src/api/v2" --dry-run`,
		"capture": `  git rally capture verify --lines 20`,
		"attach":  `  git rally attach verify`,
		"stop": `  git rally stop verify --dry-run
  git rally stop verify`,
		"adopt": `  git rally adopt helper --tmux work:1.0 --agent claude --tool claude_code:helper`,
		"watch": `  git rally watch --tool codex:verify-1
  git rally watch --once --timeout 10m --json
  git rally watch --on-activity 'notify-send "rally: $RALLY_COUNT new facts"'`,
		"plan": `  git rally plan lint checkout.json
  git rally plan start checkout.json
  git rally plan status`,
		"plan lint":   `  git rally plan lint checkout.json --json`,
		"plan start":  `  git rally plan start checkout.json`,
		"plan status": `  git rally plan status checkout-v2 --json`,
		"plan take":   `  git rally plan take checkout-v2/api`,
		"plan report": `  git rally plan report checkout-v2/api --evidence "go test ./src/api/... ok" --revision HEAD`,
		"plan close":  `  git rally plan close checkout-v2`,
		"plan run":    `  git rally plan run checkout-v2 --agent codex --max 2 --dry-run --json`,
		"serve": `  git rally serve
  git rally serve --addr 127.0.0.1:8377 --open`,
		"mcp": `  git rally mcp --tool claude_code:impl-1
  git rally hooks install --mcp --claude`,
		"completion bash": `  source <(git rally completion bash)
  git rally completion bash > ~/.local/share/bash-completion/completions/git-rally`,
		"completion zsh":        `  git rally completion zsh > "${fpath[1]}/_git-rally"`,
		"completion fish":       `  git rally completion fish > ~/.config/fish/completions/git-rally.fish`,
		"completion powershell": `  git rally completion powershell | Out-String | Invoke-Expression`,
		"deinit": `  git rally deinit
  git rally deinit --delete-ledger`,
		"checkpoint": `  git rally checkpoint
  git config --add rally.checkpointSigner lead@example.com   # in the clones that trust it`,
	}
})

// addExamples fills in the Examples of the commands in the tree.
func addExamples(c *cobra.Command) {
	key := strings.TrimPrefix(strings.TrimPrefix(c.CommandPath(), c.Root().Name()), " ")
	if c.Example == "" {
		c.Example = examples()[key]
	}
	for _, sub := range c.Commands() {
		addExamples(sub)
	}
}
