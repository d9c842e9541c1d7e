package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/ledger"
)

type watchOptions struct {
	since, timeout, interval, onActivity string
	once, json                           bool
	hookTool                             string // RALLY_TOOL of --on-activity
}

func newCmdWatch(f *factory) *cobra.Command {
	opts := &watchOptions{}
	c := &cobra.Command{
		Use:   "watch [--tool T] [--since <fact-id>] [--once] [--timeout <dur>] [--interval <dur>] [--on-activity <command>] [--json]",
		Short: "Print each new fact as it lands (appends, syncs, fetched facts), oldest first",
		Long: `Follow the ledger: print each new fact as it lands, one line each (--json: one
JSON fact per line). --tool T keeps what concerns T: handoffs to T or all,
answers to T's handoffs, claims and blockers overlapping T's claims, risks
and retractions of T's facts, deliveries to T. --since prints the facts
after that one first. --once exits 0 after the first batch, or 1 when
--timeout passes first (without --once, --timeout just ends the watch).
--on-activity runs the command through sh -c after each batch, with
RALLY_FROM and RALLY_TO (ledger commits), RALLY_COUNT and RALLY_TOOL set;
its output goes to stderr and its failure is reported, watching goes on.

watch is woken by file-system notification of the ledger ref and reads the
ref every --interval (default 2s) as a fallback; it starts no process while
the ledger is still.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error { return runWatch(f, opts) },
	}
	c.Flags().StringVar(&opts.since, "since", "", "first print the facts after this one")
	c.Flags().BoolVar(&opts.once, "once", false, "exit after the first batch (exit 1 when --timeout passes first)")
	c.Flags().StringVar(&opts.timeout, "timeout", "", "stop after this long, e.g. 30s or 10m")
	c.Flags().StringVar(&opts.interval, "interval", "2s", "how often to read the ref when no notification comes")
	c.Flags().StringVar(&opts.onActivity, "on-activity", "", "a shell command to run after each batch")
	c.Flags().BoolVar(&opts.json, "json", false, "one JSON fact per line (NDJSON)")
	return c
}

func runWatch(f *factory, opts *watchOptions) error {
	interval := ledger.DefaultWatchInterval
	var err error
	if opts.interval != "" {
		if interval, err = parseDuration("--interval", opts.interval); err != nil {
			return err
		}
		if interval < 10*time.Millisecond {
			return usagef("--interval %s is too short; 10ms at least", opts.interval)
		}
	}
	var timeout time.Duration
	if opts.timeout != "" {
		if timeout, err = parseDuration("--timeout", opts.timeout); err != nil {
			return err
		}
	}
	tool := f.ToolFlag
	if tool != "" {
		if err := facts.CheckTool(tool); err != nil {
			return err
		}
	}
	opts.hookTool = tool
	if opts.hookTool == "" && opts.onActivity != "" {
		if o, err := f.Identity(); err == nil {
			opts.hookTool = o.Tool
		}
	}
	l, err := f.Ledger()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	w := l.Watch(interval)
	defer w.Close()
	if _, err := l.Read(); err != nil { // merges fetched facts where reads do
		return err
	}
	head, err := l.HeadString()
	if err != nil {
		return err
	}
	if opts.since != "" {
		from, err := l.Find(opts.since)
		if err != nil {
			return err
		}
		after, err := l.After(from.Key())
		if err != nil {
			return err
		}
		if n := watchBatch(f, l, opts, tool, "", head, after); n > 0 && opts.once {
			return nil
		}
	}
	for {
		next, err := w.Wait(ctx, head)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) && opts.once {
				// Exit 1 is the documented answer; a word says why, on
				// stderr, so a script reading stdout sees nothing new.
				fmt.Fprintf(f.Err, "git-rally: note: watch timed out after %s with no new fact\n", opts.timeout)
				return &exitError{Code: ExitError}
			}
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		fs, err := l.Between(head, next)
		if err != nil {
			return err
		}
		from := head
		head = next
		if n := watchBatch(f, l, opts, tool, from, next, fs); n > 0 && opts.once {
			return nil
		}
	}
}

// watchBatch prints the facts of one batch that pass the --tool filter
// and runs --on-activity for them; it returns how many it printed.
func watchBatch(f *factory, l *ledger.Ledger, opts *watchOptions, tool, from, to string, fs []*facts.Fact) int {
	if tool != "" && len(fs) > 0 {
		st, err := l.Read()
		if err != nil {
			return 0
		}
		authors := map[string]string{}
		for _, fa := range fs {
			authors[fa.ID] = fa.Tool
		}
		authorOf := func(id string) string {
			if a, ok := authors[id]; ok {
				return a
			}
			if h := st.Handoffs()[id]; h != nil {
				return h.Fact.Tool
			}
			a := ""
			if fa, err := l.Find(id); err == nil {
				a = fa.Tool
			}
			authors[id] = a
			return a
		}
		kept := fs[:0:0]
		for _, fa := range fs {
			if facts.Concerns(st, tool, fa, authorOf) {
				kept = append(kept, fa)
			}
		}
		fs = kept
	}
	if len(fs) == 0 {
		return 0
	}
	for _, fa := range fs {
		if opts.json {
			raw := fa.Raw
			if len(raw) == 0 {
				raw = fa.Encode()
			}
			f.Out.Write(append(bytes.TrimSpace(raw), '\n'))
			continue
		}
		// The kind has its own column: the summary goes on without it
		// (not "note note watch me").
		fmt.Fprintf(f.Out, "%s %s %4d %-9s %s\n", facts.Sanitize(fa.At, 40), fa.ID, fa.Clock, fa.Kind,
			facts.Sanitize(strings.TrimPrefix(fa.Summary(), fa.Kind+" "), 300))
	}
	if opts.onActivity != "" {
		cmd := exec.Command("sh", "-c", opts.onActivity)
		cmd.Env = append(os.Environ(), "RALLY_FROM="+from, "RALLY_TO="+to, "RALLY_COUNT="+strconv.Itoa(len(fs)), "RALLY_TOOL="+opts.hookTool)
		cmd.Stdout, cmd.Stderr = f.Err, f.Err
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(f.Err, "git-rally: warning: --on-activity failed: %v (watching goes on)\n", err)
		}
	}
	return len(fs)
}
