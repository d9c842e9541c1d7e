package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/facts"
)

type retractOptions struct {
	reason string
	j      jsonFlags
}

func newCmdRetract(f *factory) *cobra.Command {
	opts := &retractOptions{}
	c := &cobra.Command{
		Use:   "retract <id> --reason <text>",
		Short: "Withdraw a fact you wrote; the original stays in the log, projections ignore it",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o, err := f.Identity()
			if err != nil {
				return err
			}
			if strings.TrimSpace(opts.reason) == "" {
				return &usageError{Msg: "retract needs --reason <text>", Hint: fmt.Sprintf("git rally retract %s --reason \"wrong path\"", args[0])}
			}
			l, err := f.Ledger()
			if err != nil {
				return err
			}
			t, err := l.Find(args[0])
			if err != nil {
				return err
			}
			_, err = f.AppendFacts(&opts.j, facts.Retract(o, t, opts.reason))
			return err
		},
	}
	c.Flags().StringVar(&opts.reason, "reason", "", "why (required)")
	addJSONFlags(c, &opts.j)
	return c
}

// newCmdSay accepts Rally's spelling: say <kind> with --path, --scope and
// --ref, and runs the matching command.
func newCmdSay(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:                "say <kind> [flags]",
		Short:              "Rally's spelling: say claim --path P, say handoff --target T, say receipt --ref ID",
		DisableFlagParsing: true,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 0 || args[0] == "--help" || args[0] == "-h" {
				return c.Help()
			}
			kind := args[0]
			cmd, ok := sayKinds[kind]
			if !ok {
				return &usageError{Msg: fmt.Sprintf("say: unknown kind %q", kind),
					Hint: "kinds: presence, leave, claim, release, handoff, receipt, resolve, artifact, retract, note, blocker, risk, decision"}
			}
			var pos, rest []string
			a := args[1:]
			for i := 0; i < len(a); i++ {
				name, val, hasVal := strings.Cut(a[i], "=")
				takes := func() (string, bool) {
					if hasVal {
						return val, true
					}
					if i+1 < len(a) {
						i++
						return a[i], true
					}
					return "", false
				}
				switch {
				case (name == "--path" || (name == "--scope" && (kind == "claim" || kind == "release"))):
					v, ok := takes()
					if !ok {
						return usagef("say: %s needs a value", name)
					}
					pos = append(pos, v)
				case name == "--ref" && (kind == "receipt" || kind == "resolve" || kind == "retract" || kind == "release"):
					v, ok := takes()
					if !ok {
						return usagef("say: --ref needs a value")
					}
					pos = append(pos, v)
				default:
					rest = append(rest, a[i])
				}
			}
			root := newRootCmd(f)
			root.SetArgs(append(append([]string{cmd}, pos...), rest...))
			root.SetOut(f.Out)
			root.SetErr(f.Err)
			return root.Execute()
		},
	}
}

var sayKinds = map[string]string{
	"presence": "enter", "enter": "enter", "leave": "leave", "claim": "claim", "release": "release",
	"handoff": "handoff", "receipt": "receipt", "resolve": "resolve", "artifact": "artifact",
	"retract": "retract", "note": "note", "blocker": "blocker", "risk": "risk", "decision": "decision",
}
