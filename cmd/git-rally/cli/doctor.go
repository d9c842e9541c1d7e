package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/ledger"
)

type problemJSON struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Path    string `json:"path,omitempty"`
}

type reapJSON struct {
	Kind   string   `json:"kind"`
	ID     string   `json:"id"`
	Owner  string   `json:"owner"`
	Target string   `json:"target,omitempty"`
	Scopes []string `json:"scopes,omitempty"`
	Reason string   `json:"reason"`
	Since  string   `json:"since"`
	Fact   string   `json:"fact,omitempty"`
}

type doctorJSON struct {
	OK       bool          `json:"ok"`
	Problems []problemJSON `json:"problems"`
	Reaped   []reapJSON    `json:"reaped"`
	Applied  bool          `json:"applied"`
	// Removed lists the temporary object files killed writers left
	// (older than an hour), which doctor removed.
	Removed []string `json:"removed"`
	// Repaired counts the facts --repair wrote back (0: nothing missing).
	Repaired int `json:"repaired,omitempty"`
	// Sealed counts the segment blobs --repair wrote for closed segments
	// that lacked one (a ledger written before appends wrote them).
	Sealed int `json:"sealed,omitempty"`
	// Unsealed counts the closed segments without a segment blob, which
	// a cold read reads fact by fact; --repair writes their blobs.
	Unsealed int `json:"unsealed,omitempty"`
	// Signatures counts the verdicts of every fact (with signing or an
	// allowed-signers file configured).
	Signatures map[string]int `json:"signatures,omitempty"`
	// ClockWindow is the number of last commits clocks were checked over
	// when the history is longer than doctorMaxCommits (0: the whole
	// history).
	ClockWindow int `json:"clock_window,omitempty"`
}

// doctorMaxCommits is the longest history doctor checks clocks along
// from its root; a longer one is checked over its last commits
// (ledger.ClockTail, fewer when they added many fact blobs).
var doctorMaxCommits = 5000

type doctorOptions struct {
	reap, apply, repair bool
	j                   jsonFlags
}

func newCmdDoctor(f *factory) *cobra.Command {
	opts := &doctorOptions{}
	c := &cobra.Command{
		Use:   "doctor [--reap-stale] [--apply] [--repair]",
		Short: "Check the ledger's integrity; --reap-stale lists (with --apply closes) expired claims of silent owners and 30-day-old handoffs",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, args []string) error { return runDoctor(f, opts) },
	}
	c.Flags().BoolVar(&opts.reap, "reap-stale", false, "list what the reaper would close")
	c.Flags().BoolVar(&opts.apply, "apply", false, "with --reap-stale: append the closing facts (authored by rally)")
	c.Flags().BoolVar(&opts.repair, "repair", false, "when objects of the ledger's history are missing (a git prune beside appends), write every fact back from this clone's cache in a new commit; and write the segment blobs closed segments lack (a ledger written before appends wrote them), so a cold read reads each segment as one blob")
	addJSONFlags(c, &opts.j)
	return c
}

func runDoctor(f *factory, opts *doctorOptions) error {
	if opts.apply && !opts.reap {
		return &usageError{Msg: "--apply goes with --reap-stale", Hint: "git rally doctor --reap-stale --apply"}
	}
	l, err := f.Ledger()
	if err != nil {
		return err
	}
	var healed *ledger.HealResult
	if opts.repair {
		hr, err := l.Heal()
		if err != nil {
			return err
		}
		if hr.Healed {
			healed = &hr
		}
	}
	var sealed ledger.SealResult
	if opts.repair {
		if sealed, err = l.SealClosed(); err != nil {
			return err
		}
	}
	problems, window, err := l.DoctorWindow(doctorMaxCommits)
	if err != nil {
		return err
	}
	unsealed := 0
	if !opts.repair {
		if unsealed, err = l.Unsealed(); err != nil {
			return err
		}
	}
	if !opts.repair {
		if whole, err := l.HistoryWhole(); err == nil && !whole && !hasCode(problems, "missing-object") {
			problems = append(problems, ledger.Problem{Code: "missing-object",
				Message: "objects of the ledger's history are missing in this clone (a git prune beside rally's appends removes them); every fact is still in the cache: git rally doctor --repair"})
		}
	}
	out := doctorJSON{Problems: []problemJSON{}, Reaped: []reapJSON{}, Removed: l.Store.RemoveStaleTemps(time.Now())}
	for _, p := range problems {
		out.Problems = append(out.Problems, problemJSON{Code: p.Code, Message: p.Message, Path: p.Path})
	}
	if opts.reap {
		st, err := l.Read()
		if err != nil {
			return err
		}
		now := f.MustNow()
		items := st.ReapCandidates(now)
		written := map[string]string{}
		if opts.apply && len(items) > 0 {
			fs, err := l.Append(facts.Reap())
			if err != nil {
				return err
			}
			for _, w := range fs {
				written[w.Ref] = w.ID
			}
			out.Applied = true
		}
		for _, it := range items {
			out.Reaped = append(out.Reaped, reapJSON{Kind: it.Kind, ID: it.ID, Owner: it.Owner.String(), Target: it.Target,
				Scopes: it.Scopes, Reason: it.Reason, Since: facts.FormatTime(it.Since), Fact: written[it.ID]})
		}
	}
	if v, err := l.Verifier(); err != nil {
		return err
	} else if v != nil {
		if out.Signatures, err = l.SignatureCounts(v); err != nil {
			return err
		}
	}
	if healed != nil {
		out.Repaired = healed.Facts
	}
	out.Sealed, out.Unsealed = sealed.Segments, unsealed
	out.ClockWindow = window
	out.OK = len(out.Problems) == 0
	if opts.j.On() {
		if err := f.PrintJSON(&opts.j, out); err != nil {
			return err
		}
	} else {
		for _, p := range out.Problems {
			fmt.Fprintf(f.Out, "problem %s: %s\n", p.Code, p.Message)
		}
		if healed != nil {
			fmt.Fprintf(f.Out, "repaired: objects of the ledger's history at %s were missing; wrote %s back from this clone's cache in %s\n", healed.OldHead, plural(healed.Facts, "fact"), healed.Head)
		}
		if out.Sealed > 0 {
			fmt.Fprintf(f.Out, "sealed: wrote the segment blobs of %s in %s\n", plural(out.Sealed, "closed segment"), sealed.Head)
		}
		if out.ClockWindow > 0 {
			fmt.Fprintf(f.Out, "note: clocks checked over the last %d commits (the history is longer than %d)\n", out.ClockWindow, doctorMaxCommits)
		}
		if out.Unsealed > 0 {
			fmt.Fprintf(f.Out, "note: %s without a segment blob (written before appends wrote them): a cold read reads their facts one by one; git rally doctor --repair writes them\n", plural(out.Unsealed, "closed segment"))
		}
		for _, p := range out.Removed {
			fmt.Fprintf(f.Out, "removed %s (a temporary object file a killed writer left)\n", p)
		}
		verb := "would reap"
		if out.Applied {
			verb = "reaped"
		}
		for _, r := range out.Reaped {
			fmt.Fprintf(f.Out, "%s %s %s of %s (%s since %s)\n", verb, r.Kind, r.ID, r.Owner, r.Reason, r.Since)
		}
		if s := out.Signatures; s != nil {
			fmt.Fprintf(f.Out, "signatures: %d verified, %d unsigned, %d bad\n", s[ledger.Verified], s[ledger.Unsigned], s[ledger.BadSig])
		}
		if out.OK {
			fmt.Fprintln(f.Out, "ledger ok")
		}
	}
	if !out.OK {
		codes := []string{}
		for _, p := range out.Problems {
			codes = append(codes, p.Code)
		}
		err := fmt.Errorf("doctor found %d problem(s): %s", len(out.Problems), strings.Join(codes, ", "))
		if !opts.repair && hasCode(problems, "missing-object") {
			err = &facts.FailedError{Err: err, Hint: "every fact is still in this clone's cache: git rally doctor --repair"}
		}
		// The result (with "ok": false) is the answer: no error document.
		return &cmdutil.AnsweredError{Err: err}
	}
	return nil
}

func hasCode(ps []ledger.Problem, code string) bool {
	for _, p := range ps {
		if p.Code == code {
			return true
		}
	}
	return false
}
