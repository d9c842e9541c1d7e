package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/ledger"
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
	// The whole log (no -n) is streamed: a fact is decoded, printed and
	// dropped, so a million facts cost what one does (2.2 GB when they
	// were all held). --query picks out of the whole document, which is
	// held.
	stream := opts.n == 0 && opts.j.Query == ""
	var sel []*facts.Fact
	if !stream {
		// With -n, the mirror's index is read from its end.
		if sel, err = l.TailOf(opts.n, opts.kind, opts.tool); err != nil {
			return err
		}
	}
	v, err := l.Verifier()
	if err != nil {
		return err
	}
	if opts.j.On() {
		if stream {
			return writeLogJSON(f.Out, v, func(fn func(*facts.Fact) error) error { return l.Each(opts.kind, opts.tool, fn) })
		}
		return f.PrintJSON(&opts.j, factsWithVerdicts(v, sel))
	}
	now := f.MustNow()
	defer f.startPager()()
	pt := f.Paint()
	var retracted map[string]string
	if st, err := f.State(); err == nil {
		retracted = st.Retraction
	}
	line := func(fa *facts.Fact) error {
		mark := ""
		if r, ok := retracted[fa.ID]; ok {
			mark = " " + pt(cYellow, "[retracted by "+r+"]")
		}
		_, err := fmt.Fprintf(f.Out, "%s %4d %s %-9s %s%s%s\n", fa.ID, fa.Clock, shortAgo(now, fa.At), fa.Kind, facts.Sanitize(logLine(fa), 400),
			mark, verdictTag(verdictOf(v, fa.ID, fa.Tool)))
		return err
	}
	if stream {
		return l.Each(opts.kind, opts.tool, line)
	}
	for _, fa := range sel {
		line(fa)
	}
	return nil
}

// writeLogJSON writes the facts each hands on as the JSON array
// PrintJSON writes of factsWithVerdicts, byte for byte, one fact at a
// time: nothing of a fact is kept after it is written.
func writeLogJSON(w io.Writer, v *ledger.Verifier, each func(func(*facts.Fact) error) error) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var compact, el bytes.Buffer
	n := 0
	err := each(func(fa *facts.Fact) error {
		raw := fa.Raw
		if len(raw) == 0 {
			raw = fa.Encode()
		}
		raw = bytes.TrimSpace(raw)
		if v != nil {
			raw = withVerdict(raw, v.Verdict(fa.ID, fa.Tool))
		}
		// What encoding/json writes of a RawMessage in an array (without
		// HTML escaping: json.Compact), indented as an element.
		compact.Reset()
		if err := json.Compact(&compact, raw); err != nil {
			return fmt.Errorf("fact %s: %w", fa.ID, err)
		}
		// An element of the array, indented as pretty's Width 1 (and
		// json.Indent) indent it, into a buffer reused fact after fact.
		el.Reset()
		el.WriteString("  ")
		if err := json.Indent(&el, compact.Bytes(), "  ", "  "); err != nil {
			return fmt.Errorf("fact %s: %w", fa.ID, err)
		}
		if n == 0 {
			bw.WriteString("[\n")
		} else {
			bw.WriteString(",\n")
		}
		n++
		_, err := bw.Write(el.Bytes())
		return err
	})
	if err != nil {
		bw.Flush()
		return err
	}
	if n == 0 {
		bw.WriteString("[]\n")
	} else {
		bw.WriteString("\n]\n")
	}
	return bw.Flush()
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
