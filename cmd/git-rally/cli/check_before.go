package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"github.com/git-rally/git-rally/facts"
)

func newCmdCheck(f *factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "check",
		Short: "Ask the room before acting",
	}
	opts := &checkOptions{}
	bw := &cobra.Command{
		Use:   "before-write <path>... [--strict]",
		Short: "May I write these paths? Appends nothing; --strict exits 4 on a stop",
		Args:  cobra.MinimumNArgs(1),
		RunE:  func(c *cobra.Command, args []string) error { return runCheckBeforeWrite(f.Factory, opts, args) },
	}
	bw.Flags().BoolVar(&opts.Strict, "strict", false, "exit 4 when a finding says stop")
	addJSONFlags(bw, &opts.J)
	copts := &checkOptions{}
	bc := &cobra.Command{
		Use:   "before-complete [--strict]",
		Short: "May I call my work done? Stops on claims you hold; warns on your blockers and unresolved handoffs",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, args []string) error { return runCheckBeforeComplete(f.Factory, copts) },
	}
	bc.Flags().BoolVar(&copts.Strict, "strict", false, "exit 4 when a finding says stop")
	addJSONFlags(bc, &copts.J)
	c.AddCommand(bw, bc)
	return c
}

// checkOptions are check's flags.
type checkOptions struct {
	Strict bool
	J      cmdutil.JSONFlags
}

type findingJSON struct {
	Code     string `json:"code"`
	Severity string `json:"severity"`
	Path     string `json:"path"`
	Claim    string `json:"claim,omitempty"`
	Owner    string `json:"owner,omitempty"`
	Message  string `json:"message"`
}

type checkJSON struct {
	Allow    bool          `json:"allow"`
	Tool     string        `json:"tool,omitempty"`
	Findings []findingJSON `json:"findings"`
}

// runCheckBeforeWrite answers check before-write for the paths and scopes in
// args.
func runCheckBeforeWrite(f *cmdutil.Factory, opts *checkOptions, args []string) error {
	o, err := f.Asker()
	if err != nil {
		return err
	}
	res, err := checkPaths(f, o, args)
	if err != nil {
		return err
	}
	return printCheck(f, opts, o, res)
}

// runCheckBeforeComplete answers check before-complete: stops on claims the
// caller holds, warnings on its blockers and unresolved handoffs.
func runCheckBeforeComplete(f *cmdutil.Factory, opts *checkOptions) error {
	o, err := f.Asker()
	if err != nil {
		return err
	}
	st, err := f.State()
	if err != nil {
		return err
	}
	return printCheck(f, opts, o, st.CheckBeforeComplete(o, f.MustNow()))
}

// printCheck prints a check's result; --strict makes a stop exit 4.
func printCheck(f *cmdutil.Factory, opts *checkOptions, o facts.Owner, res facts.CheckResult) error {
	out := toCheckJSON(o, res)
	if opts.J.On() {
		if err := f.PrintJSON(&opts.J, out); err != nil {
			return err
		}
	} else {
		pt := f.Paint()
		for _, fd := range out.Findings {
			fmt.Fprintf(f.Out, "%s %-18s %s: %s\n", cmdutil.PaintState(pt, fmt.Sprintf("%-5s", fd.Severity)), fd.Code, fd.Path, facts.Sanitize(fd.Message, 400))
		}
		fmt.Fprintf(f.Out, "allow: %v\n", out.Allow)
	}
	if opts.Strict && !res.Allow {
		return &cmdutil.ExitError{Code: cmdutil.ExitStop}
	}
	return nil
}

// checkPaths runs the write check for the paths and scopes given on the
// command line (port:8080 and dir:src/ui as well as src/a.go).
func checkPaths(f *cmdutil.Factory, o facts.Owner, args []string) (facts.CheckResult, error) {
	pc, err := f.PathContext()
	if err != nil {
		return facts.CheckResult{}, err
	}
	var scopes []facts.Scope
	for _, a := range args {
		sc, err := facts.ParseScope(a, pc)
		if err != nil {
			return facts.CheckResult{}, err
		}
		if err := globHint(a, sc, pc); err != nil {
			return facts.CheckResult{}, err
		}
		scopes = append(scopes, sc)
	}
	st, err := f.State()
	if err != nil {
		return facts.CheckResult{}, err
	}
	return st.CheckScopes(o, scopes, f.MustNow()), nil
}

func toCheckJSON(o facts.Owner, res facts.CheckResult) checkJSON {
	out := checkJSON{Allow: res.Allow, Tool: o.Tool, Findings: []findingJSON{}}
	for _, fd := range res.Findings {
		fj := findingJSON{Code: fd.Code, Severity: fd.Severity, Path: fd.Path, Claim: fd.Claim, Message: facts.Sanitize(fd.Message, 1000)}
		if fd.Owner.Tool != "" {
			fj.Owner = fd.Owner.String()
		}
		out.Findings = append(out.Findings, fj)
	}
	return out
}
