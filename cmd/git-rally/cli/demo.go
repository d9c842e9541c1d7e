package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

type demoOptions struct {
	c     demoChoices
	keep  bool
	chose bool // any choice flag was given
	serve bool
	addr  string
	j     jsonFlags
}

func newCmdDemo(f *factory) *cobra.Command {
	opts := &demoOptions{}
	c := &cobra.Command{
		Use:   "demo [--agents N] [--overlap] [--handoff] [--receiver managed|unmanaged] [--layout worktrees|shared] [--time-passes]",
		Short: "Play the protocol in a throw-away repository, with the choices you pick",
		Long: `Play a scenario with real commands in a throw-away repository and show each
command as typed, what it printed, and one line saying what happened. The
choices alone decide the run: the clock is set with RALLY_NOW before every
command and the identities are fixed, so the same choices print the same
output, byte for byte. With no story choice (--overlap, --handoff,
--time-passes) it plays --overlap --handoff, shaped by --agents, --layout
and --receiver; --receiver implies --handoff.
--json prints every step with the facts it wrote and
the room after it; with --serve, one document with the runner's URL and
the pid serving it ({"url", "pid"}).`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			// Only the story choices replace the tour: --agents, --layout
			// and --receiver shape the story, they never empty it.
			for _, n := range []string{"overlap", "handoff", "time-passes"} {
				opts.chose = opts.chose || c.Flags().Changed(n)
			}
			if c.Flags().Changed("receiver") {
				opts.c.Handoff = true // a receiver needs a handoff to receive
			}
			return runDemo(f, opts)
		},
	}
	fl := c.Flags()
	fl.IntVar(&opts.c.Agents, "agents", 2, "how many agents join (2-8)")
	fl.BoolVar(&opts.c.Overlap, "overlap", false, "two agents want one file")
	fl.BoolVar(&opts.c.Handoff, "handoff", false, "one agent hands work to another, carried through receipt to resolve")
	fl.StringVar(&opts.c.Receiver, "receiver", "unmanaged", "the handoff's receiver: unmanaged (reads its inbox) or managed (a session rally started)")
	fl.StringVar(&opts.c.Layout, "layout", "worktrees", "worktrees (one per agent) or shared (one checkout)")
	fl.BoolVar(&opts.c.TimePasses, "time-passes", false, "leases expire, a deadline passes, a takeover and the reaper")
	fl.BoolVar(&opts.keep, "keep", false, "keep the repository and print its path (the next demo replaces it)")
	fl.BoolVar(&opts.serve, "serve", false, "open the scenario runner as a web page on loopback: the choices as controls, step by step")
	fl.StringVar(&opts.addr, "addr", "127.0.0.1:0", "with --serve: the loopback address to listen on")
	addJSONFlags(c, &opts.j)
	return c
}

func runDemo(f *factory, opts *demoOptions) error {
	if opts.serve {
		if f.server == nil {
			return f.execServer()
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return serveDemo(ctx, f, opts.addr, &opts.j, nil)
	}
	if !opts.chose {
		opts.c = demoTour(opts.c)
	}
	opts.c = opts.c.implied()
	if err := opts.c.check(); err != nil {
		return err
	}
	steps, agents := demoScript(opts.c)
	repo, release, err := demoPlace(opts.keep)
	if err != nil {
		return err
	}
	defer release()
	var each func(demoResult)
	if !opts.j.On() {
		demoHeader(f.Out, opts.c, agents, repo)
		each = func(r demoResult) { printDemoStep(f.Out, r) }
	}
	results, counts, err := runDemoSteps(repo, steps, agents, each)
	if err != nil {
		return err
	}
	if opts.j.On() {
		return f.PrintJSON(&opts.j, demoJSON{Choices: opts.c, Agents: agents, Steps: results, Counts: counts})
	}
	fmt.Fprintf(f.Out, "\n%s accepted, %d refused; %s, %s; %s; %s\n",
		plural(counts.ClaimsAccepted, "claim"), counts.ClaimsRefused, plural(counts.Handoffs, "handoff"), plural(counts.Receipts, "receipt"),
		plural(counts.Worktrees, "worktree"), plural(counts.Risks, "risk"))
	if opts.keep {
		fmt.Fprintf(f.Out, "the repository is kept at %s (the next demo replaces it)\n", repo)
	} else {
		fmt.Fprintln(f.Out, "done; the throw-away repository is removed")
	}
	return nil
}

// demoTour is the run with no choice at all: a refusal and a handoff.
func demoTour(c demoChoices) demoChoices {
	c.Overlap, c.Handoff = true, true
	return c
}

// implied are the choices another choice needs: a managed receiver plays
// only with a handoff to receive (the runner's controls send both).
func (c demoChoices) implied() demoChoices {
	if c.Receiver == "managed" {
		c.Handoff = true
	}
	return c
}

// check is validate plus what this build can play.
func (c demoChoices) check() error {
	if err := c.validate(); err != nil {
		return err
	}
	return nil
}

func demoHeader(w io.Writer, c demoChoices, agents []demoAgent, repo string) {
	var who []string
	for _, a := range agents {
		who = append(who, fmt.Sprintf("%s (%s)", a.Tool, a.Wants))
	}
	layout := "each in a worktree of its own"
	if c.Layout == "shared" {
		layout = "all in one shared checkout"
	}
	fmt.Fprintf(w, "git rally demo: %d agents, %s: %s.\n", c.Agents, layout, strings.Join(who, ", "))
	fmt.Fprintf(w, "repo is %s, a new repository with one commit of %d files.\n", repo, len(demoFiles))
	fmt.Fprintln(w, "Every command below ran for real; RALLY_NOW in front of it sets rally's clock, so the run is the same every time.")
}

func printDemoStep(w io.Writer, r demoResult) {
	fmt.Fprintf(w, "\n== %d. %s\n", r.N, r.Explain)
	fmt.Fprintf(w, "%s$ %s\n", r.Dir, r.Command)
	fmt.Fprint(w, indent(r.Stdout))
	fmt.Fprint(w, indent(r.Stderr))
	if r.Exit != 0 {
		fmt.Fprintf(w, "  (exit %d)\n", r.Exit)
	}
}

func indent(s string) string {
	if s == "" {
		return ""
	}
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ") + "\n"
}
