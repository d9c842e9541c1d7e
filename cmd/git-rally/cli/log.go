package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/facts"
)

type logOptions struct {
	kind, tool string
	n          int
	j          jsonFlags
}

func newCmdLog(f *factory) *cobra.Command {
	opts := &logOptions{}
	c := &cobra.Command{
		Use:   "log [--kind K] [--tool T] [-n N]",
		Short: "The durable history, oldest first (retracted facts included)",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, args []string) error { return runLog(f, opts) },
	}
	c.Flags().StringVar(&opts.kind, "kind", "", "only facts of this kind")
	c.Flags().IntVarP(&opts.n, "max-count", "n", 0, "only the last N facts")
	addJSONFlags(c, &opts.j)
	return c
}

func runLog(f *factory, opts *logOptions) error {
	if opts.n < 0 {
		return usagef("-n must be positive")
	}
	// log's --tool filters by author.
	opts.tool = f.ToolFlag
	l, err := f.Ledger()
	if err != nil {
		return err
	}
	st, err := l.Read()
	if err != nil {
		return err
	}
	if opts.kind != "" && !knownKind(opts.kind, st) {
		return &usageError{Code: "unknown-kind", Msg: fmt.Sprintf("unknown kind %q; kinds: %s", opts.kind, strings.Join(facts.Kinds, ", ")),
			Hint: "git rally log --kind claim"}
	}
	// With -n, the mirror's index is read from its end.
	sel, err := l.TailOf(opts.n, opts.kind, opts.tool)
	if err != nil {
		return err
	}
	v, err := l.Verifier()
	if err != nil {
		return err
	}
	if opts.j.On() {
		return f.PrintJSON(&opts.j, factsWithVerdicts(v, sel))
	}
	now := f.MustNow()
	defer f.startPager()()
	pt := f.Paint()
	var retracted map[string]string
	if st, err := f.State(); err == nil {
		retracted = st.Retraction
	}
	for _, fa := range sel {
		mark := ""
		if r, ok := retracted[fa.ID]; ok {
			mark = " " + pt(cYellow, "[retracted by "+r+"]")
		}
		fmt.Fprintf(f.Out, "%s %4d %s %-9s %s%s%s\n", fa.ID, fa.Clock, shortAgo(now, fa.At), fa.Kind, facts.Sanitize(logLine(fa), 400),
			mark, verdictTag(verdictOf(v, fa.ID, fa.Tool)))
	}
	return nil
}

// knownKind: a kind this version knows, or one some fact in the ledger has
// (facts of newer kinds are kept and shown).
func knownKind(k string, st *facts.State) bool {
	for _, x := range facts.Kinds {
		if x == k {
			return true
		}
	}
	return st.ByKind[k] > 0
}

func shortAgo(now time.Time, at string) string {
	return fmt.Sprintf("%-9s", ago(now, at))
}

func newCmdShow(f *factory) *cobra.Command {
	var j jsonFlags
	c := &cobra.Command{
		Use:   "show <id>",
		Short: "Show one fact (any unique id prefix of 6+ characters)",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			l, err := f.Ledger()
			if err != nil {
				return err
			}
			fa, err := l.Find(args[0])
			if err != nil {
				return err
			}
			v, err := l.Verifier()
			if err != nil {
				return err
			}
			raw := factsWithVerdicts(v, []*facts.Fact{fa})[0]
			if j.On() {
				return f.PrintJSON(&j, raw)
			}
			var buf bytes.Buffer
			json.Indent(&buf, raw, "", "  ")
			fmt.Fprintln(f.Out, buf.String())
			return nil
		},
	}
	addJSONFlags(c, &j)
	return c
}
