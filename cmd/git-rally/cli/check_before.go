package cli

import (
	"fmt"
	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"

	"github.com/git-rally/git-rally/facts"
)

// CheckOptions are check's flags.
type CheckOptions struct {
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

// CheckBeforeWrite answers check before-write for the paths and scopes in
// args.
func CheckBeforeWrite(f *cmdutil.Factory, opts *CheckOptions, args []string) error {
	o, err := f.Asker()
	if err != nil {
		return err
	}
	res, err := checkPaths(f, o, args)
	if err != nil {
		return err
	}
	return PrintCheck(f, opts, o, res)
}

// CheckBeforeComplete answers check before-complete: stops on claims the
// caller holds, warnings on its blockers and unresolved handoffs.
func CheckBeforeComplete(f *cmdutil.Factory, opts *CheckOptions) error {
	o, err := f.Asker()
	if err != nil {
		return err
	}
	st, err := f.State()
	if err != nil {
		return err
	}
	return PrintCheck(f, opts, o, st.CheckBeforeComplete(o, f.MustNow()))
}

// PrintCheck prints a check's result; --strict makes a stop exit 4.
func PrintCheck(f *cmdutil.Factory, opts *CheckOptions, o facts.Owner, res facts.CheckResult) error {
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
