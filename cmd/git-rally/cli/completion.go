package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/session"
)

// gitRallyBash lets git's own bash completion complete `git rally ...`:
// git calls _git_<command> when one is defined (with words, cword and cur
// set, and the git command's word at __git_cmd_idx). It asks git-rally's
// cobra completion (`git-rally __complete`) for the words after "rally".
const gitRallyBash = `
# Without the bash-completion package (apt install bash-completion, brew
# install bash-completion@2) neither git-rally's completion nor git's own
# works: say so once, when this script is sourced.
if ! declare -F _get_comp_words_by_ref >/dev/null 2>&1; then
	echo "git-rally completion: needs the bash-completion package (apt install bash-completion, brew install bash-completion@2), loaded before this script" >&2
fi

# git's bash completion calls _git_rally for "git rally <TAB>".
_git_rally() {
	local i=$(( ${__git_cmd_idx:-1} + 1 ))
	local out line list=""
	out=$(git-rally __complete "${words[@]:i:cword-i}" "$cur" 2>/dev/null) || return
	while IFS= read -r line; do
		case "$line" in
		:*) ;;
		*) list+="${line%%$'\t'*}"$'\n' ;;
		esac
	done <<< "$out"
	if [ -n "$list" ]; then
		__gitcomp_nl "$list"
	fi
}
`

// extendCompletion appends _git_rally to `completion bash`.
// It also completes handoff ids for receipt and resolve and the caller's
// claims for release.
func extendCompletion(f *factory, root *cobra.Command) {
	for name, fn := range map[string]cobra.CompletionFunc{
		"receipt": completeHandoffs(f), "resolve": completeHandoffs(f), "release": completeOwnClaims(f)} {
		if c := findSub(root, name); c != nil && c.ValidArgsFunction == nil {
			c.ValidArgsFunction = fn
		}
	}
	completeEnums(root)
	comp := findSub(root, "completion")
	if comp == nil {
		return
	}
	comp.Example = examples()["completion"]
	bash := findSub(comp, "bash")
	if bash == nil || bash.RunE == nil && bash.Run == nil {
		return
	}
	run, runE := bash.Run, bash.RunE
	bash.Run = nil
	bash.RunE = func(c *cobra.Command, args []string) error {
		if runE != nil {
			if err := runE(c, args); err != nil {
				return err
			}
		} else {
			run(c, args)
		}
		_, err := io.WriteString(c.OutOrStdout(), gitRallyBash)
		return err
	}
	bash.Long += "\n\nIt needs the bash-completion package (apt install bash-completion, brew install\nbash-completion@2) and says so on stderr when it is missing."
	bash.Long += "\n\nThe script also defines _git_rally, so git's own bash completion completes\n`git rally <TAB>` as well as `git-rally <TAB>`."
}

// completeHandoffs offers the ids of the handoffs waiting for the caller
// (receipt, resolve).
func completeHandoffs(f *factory) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		st, err := f.State()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		if o, err := f.Identity(); err == nil {
			for _, it := range st.Inbox([]string{o.Tool}, f.MustNow()) {
				out = append(out, cobra.CompletionWithDesc(it.Fact.ID, fmt.Sprintf("%s: %s", it.Fact.Tool, facts.Sanitize(it.Fact.Subject, 60))))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeOwnClaims offers the caller's claim scopes and ids (release).
func completeOwnClaims(f *factory) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		st, err := f.State()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		o, err := f.Identity()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, cl := range st.OwnedClaims(o) {
			out = append(out, cl.Scopes...)
			out = append(out, cobra.CompletionWithDesc(cl.ID, "claim"))
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeEnums completes the values of flags and arguments that take one
// of a few words (demo --receiver, --layout, --agents; --color; --severity;
// log --kind; status; run's and adopt's agents).
func completeEnums(root *cobra.Command) {
	words := func(ws ...string) cobra.CompletionFunc {
		return cobra.FixedCompletions(ws, cobra.ShellCompDirectiveNoFileComp)
	}
	var agents []cobra.Completion
	for _, h := range session.Hosts {
		agents = append(agents, cobra.CompletionWithDesc(h.Agent, h.Program()))
	}
	agentsFn := cobra.FixedCompletions(agents, cobra.ShellCompDirectiveNoFileComp)
	root.RegisterFlagCompletionFunc("color", cobra.FixedCompletions([]cobra.Completion{
		cobra.CompletionWithDesc("auto", "on a terminal, unless NO_COLOR"),
		cobra.CompletionWithDesc("always", ""), cobra.CompletionWithDesc("never", "")}, cobra.ShellCompDirectiveNoFileComp))
	flags := map[string]cobra.CompletionFunc{
		"receiver": cobra.FixedCompletions([]cobra.Completion{
			cobra.CompletionWithDesc("unmanaged", "the receiver reads its inbox"),
			cobra.CompletionWithDesc("managed", "the receiver is a session rally started")}, cobra.ShellCompDirectiveNoFileComp),
		"layout": cobra.FixedCompletions([]cobra.Completion{
			cobra.CompletionWithDesc("worktrees", "one per agent"),
			cobra.CompletionWithDesc("shared", "one checkout")}, cobra.ShellCompDirectiveNoFileComp),
		"agents":   words("2", "3", "4", "5", "6", "7", "8"),
		"severity": words("info", "warn", "high", "critical"),
		"kind":     words(facts.Kinds...),
		"agent":    agentsFn,
		"backend":  words("tmux"),
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for name, fn := range flags {
			if c.LocalNonPersistentFlags().Lookup(name) != nil {
				c.RegisterFlagCompletionFunc(name, fn)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if c := findSub(root, "status"); c != nil && c.ValidArgsFunction == nil {
		c.ValidArgsFunction = func(c *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return facts.DeclaredActivities, cobra.ShellCompDirectiveNoFileComp
		}
	}
	if c := findSub(root, "run"); c != nil && c.ValidArgsFunction == nil {
		c.ValidArgsFunction = func(c *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveDefault
			}
			return agents, cobra.ShellCompDirectiveNoFileComp
		}
	}
}
