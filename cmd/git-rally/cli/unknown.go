package cli

import (
	"fmt"
	"strings"
	"sync"

	"github.com/spf13/cobra"
)

// Typos never pass as success. cobra prints help and exits 0 for a group
// command (check, hooks, worktree) given a word it does not know, and for
// `help nonexist`; a script would believe `git rally hooks instal` worked.
// Every group refuses an unknown or missing subcommand with exit 2 and a
// "did you mean" when one is close.

// guardGroups makes every command that only groups subcommands refuse
// what it does not know.
func guardGroups(c *cobra.Command) {
	for _, sub := range c.Commands() {
		guardGroups(sub)
	}
	if c.HasParent() && c.HasSubCommands() {
		c.Args = cobra.ArbitraryArgs
		run := c.RunE
		bare := c.Annotations[bareRuns] != ""
		c.RunE = func(c *cobra.Command, args []string) error {
			if bare && len(args) == 0 {
				return run(c, args) // a group whose bare form is a command (lead = lead show)
			}
			return unknownSub(c, args)
		}
	}
}

// bareRuns marks a group command that runs its own RunE when given no
// subcommand.
const bareRuns = "rally-bare-runs"

// unknownSub is the usage error for an unknown or missing subcommand.
func unknownSub(c *cobra.Command, args []string) error {
	name := cmdName(c)
	if len(args) == 0 {
		return &usageError{Msg: fmt.Sprintf("%s needs a subcommand: %s", name, strings.Join(subNames(c), ", ")),
			Hint: "git rally help " + strings.TrimPrefix(name, "git rally ")}
	}
	return unknownErr(c, args[0])
}

func unknownErr(c *cobra.Command, word string) *usageError {
	name := cmdName(c)
	e := &usageError{Msg: fmt.Sprintf("unknown command %q for %q", word, name)}
	if c.SuggestionsMinimumDistance <= 0 {
		c.SuggestionsMinimumDistance = 2
	}
	if s := suggest(c, word); s != "" {
		e.Msg += fmt.Sprintf("; did you mean %q?", s)
		e.Hint = name + " " + s
	} else if name == "git rally" {
		e.Hint = "git rally help"
	} else {
		e.Hint = "git rally help " + strings.TrimPrefix(name, "git rally ")
	}
	return e
}

// synonyms are the words a newcomer types for a command under another
// name; spelling alone would send `unclaim` to claim and `who` to show.
var synonyms = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"who":     "room",
		"whois":   "room",
		"ps":      "room",
		"unclaim": "release",
		"unlock":  "release",
		"free":    "release",
		"lock":    "claim",
		"web":     "serve",
		"ui":      "serve",
		"server":  "serve",
		"list":    "room",
		"ls":      "room",
		"history": "log",
		"give":    "handoff",
	}
})

// neverSuggested are commands that exist for hosts and scripts, not for a
// person who mistyped: `lock` is not the internal `hook`.
var neverSuggested = map[string]bool{"hook": true, "__complete": true}

// suggest is the one command to name for word under c: a synonym first
// (at the top level, where those commands live), else the closest
// spelling that is not internal.
func suggest(c *cobra.Command, word string) string {
	if !c.HasParent() {
		if s, ok := synonyms()[strings.ToLower(word)]; ok && findSub(c, s) != nil {
			return s
		}
	}
	for _, s := range c.SuggestionsFor(word) {
		if !neverSuggested[s] {
			return s
		}
	}
	return ""
}

// cmdName is the command as a user types it: "git rally hooks".
func cmdName(c *cobra.Command) string {
	return "git rally" + strings.TrimPrefix(c.CommandPath(), c.Root().Name())
}

// helpHint is where the help for c is: a hint never points at --help,
// which git turns into `git help rally` and a man page lookup.
func helpHint(c *cobra.Command) string {
	if !c.HasParent() {
		return "git rally help"
	}
	return "git rally help " + strings.TrimPrefix(cmdName(c), "git rally ")
}

func subNames(c *cobra.Command) []string {
	var out []string
	for _, s := range c.Commands() {
		if s.IsAvailableCommand() {
			out = append(out, s.Name())
		}
	}
	return out
}

// newCmdHelp replaces cobra's help command, which prints the root's help
// and exits 0 for a topic it does not know.
func newCmdHelp() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		Long:  "Help for any command: git rally help claim, git rally help hooks install.",
		Example: `  git rally help claim
  git rally help hooks install`,
		RunE: func(c *cobra.Command, args []string) error {
			root := c.Root()
			target := root
			for _, a := range args {
				next := findSub(target, a)
				if next == nil {
					return unknownErr(target, a)
				}
				target = next
			}
			target.InitDefaultHelpFlag()
			return target.Help()
		},
	}
}

func findSub(c *cobra.Command, name string) *cobra.Command {
	for _, s := range c.Commands() {
		if s.Name() == name || s.HasAlias(name) {
			return s
		}
	}
	return nil
}

// typedHelp makes help and usage speak as the user types: "git rally
// claim", and "git rally help <command>" for more, never --help (which
// git turns into a man page lookup, and finds nothing until `man
// --install`: the root's help says so).
var typedOnce sync.Once

func typedHelp(root *cobra.Command) {
	// cobra's template functions are one global map: register once, so
	// the MCP server's concurrent calls never write it at once.
	typedOnce.Do(func() {
		cobra.AddTemplateFunc("typed", func(s string) string {
			return strings.Replace(s, "git-rally", "git rally", 1)
		})
	})
	t := root.UsageTemplate()
	t = strings.ReplaceAll(t, "{{.UseLine}}", "{{typed .UseLine}}")
	t = strings.ReplaceAll(t, "{{.CommandPath}} [command]", "{{typed .CommandPath}} [command]")
	t = strings.Replace(t, `Use "{{typed .CommandPath}} [command] --help" for more information about a command.`,
		`Use "git rally help [command]" for more information about a command.{{if not .HasParent}}
The manual (git rally --help, man git-rally-claim): run git rally man --install once.{{end}}`, 1)
	root.SetUsageTemplate(t)
}
