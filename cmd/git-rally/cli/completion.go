package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/facts"
)

// gitRallyBash lets git's own bash completion complete `git rally ...`:
// git calls _git_<command> when one is defined (with words, cword and cur
// set, and the git command's word at __git_cmd_idx). It asks git-rally's
// cobra completion (`git-rally __complete`) for the words after "rally".
const gitRallyBash = `
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
	comp := findSub(root, "completion")
	if comp == nil {
		return
	}
	comp.Example = examples["completion"]
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
