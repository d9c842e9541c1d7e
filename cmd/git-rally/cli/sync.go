package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/ledger"
	"github.com/git-rally/git-rally/refs"
)

type syncOptions struct {
	remote string
	noPush bool
	j      jsonFlags
}

type syncJSON struct {
	Remote    string   `json:"remote"`
	Fetched   bool     `json:"fetched"`
	NewFacts  int      `json:"new_facts"`
	Merged    bool     `json:"merged"`
	Pushed    bool     `json:"pushed"`
	Contested []string `json:"contested"` // SPEC 7 names it; contested_claims says what it is
	// Additions beyond the contract.
	ContestedClaims []string `json:"contested_claims"`
	Merge           string   `json:"merge"`
	Risks           []string `json:"risks"`
	Retracted       []string `json:"retracted_facts"` // not "retracted": the room's is a count
	Head            string   `json:"head"`
	RemoteHead      string   `json:"remote_head"`
	Rounds          int      `json:"rounds"`
	Rewritten       bool     `json:"rewritten"`
	Missing         int      `json:"missing_on_remote"`
}

func newCmdSync(f *factory) *cobra.Command {
	opts := &syncOptions{}
	c := &cobra.Command{
		Use:   "sync [<remote>] [--no-push]",
		Short: "Share the ledger: fetch, merge (union of facts), push without force",
		Long: `sync shares refs/rally/ledger through a git remote (default: git config
rally.remote, else origin). git's own fetch and push do the transfer, so
credentials, ssh config and proxies work as for any git command.

It fetches the remote's ledger into refs/rally-remotes/<remote>/ledger,
merges it into the local ledger (fast-forward, or a merge commit holding
the union of both sides' facts: never a conflict, never a loss), records a
claim-contested risk for each claim that lost to an overlapping claim made
while the clones were apart (once, across all clones), and pushes without
force. A push rejected because the remote moved is fetched, merged and
retried, with a jittered, growing pause, for as long as others keep landing
there; 8 rejections in a row while the remote stays put (a lock left
there), or 2 minutes of them, end it with exit 1.

A remote whose ledger lost facts this clone saw there before (its history
was rewritten, or the ref deleted) is reported on stderr and healed: the
union is pushed back as a fast-forward of what the remote holds now.

--json prints {"remote", "fetched", "new_facts", "merged", "pushed",
"contested"}: contested lists the open contested claims after the sync;
"risks" the claim-contested risks this sync recorded.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.remote = args[0]
			}
			return runSync(f, opts)
		},
	}
	c.Flags().BoolVar(&opts.noPush, "no-push", false, "fetch and merge only")
	addJSONFlags(c, &opts.j)
	return c
}

func runSync(f *factory, opts *syncOptions) error {
	r, err := f.Repo()
	if err != nil {
		return err
	}
	dir := r.Dir()
	remote, err := syncRemote(dir, opts.remote)
	if err != nil {
		return err
	}
	l, err := f.Ledger()
	if err != nil {
		return err
	}
	so := ledger.SyncOptions{Remote: remote, Dir: dir, Push: !opts.noPush}
	var prog *delayedWriter
	if isTerminal(f.Err) {
		prog = &delayedWriter{w: f.Err, now: time.Now, delay: time.Second}
		prog.start = prog.now()
		so.Progress = prog
	}
	res, err := l.Sync(so)
	if prog != nil {
		prog.finish()
	}
	if res != nil && res.Rewritten {
		f.warnRewritten(res, opts.noPush)
	}
	if res != nil && res.Healed {
		fmt.Fprintln(f.Err, "git-rally: warning: objects of this clone's ledger history were missing (a git prune beside rally's appends removes them); every fact was written back from this clone's cache in a new commit")
	}
	if err != nil {
		var (
			pr *ledger.PushRefusedError
			ge *refs.GitError
		)
		switch {
		case errors.As(err, &pr):
			return &facts.FailedError{Err: err, Hint: "the host or a hook there refuses refs/rally/ledger; ask its admin, or sync through another remote"}
		case errors.As(err, &ge):
			return &facts.FailedError{Err: err, Hint: fmt.Sprintf("check the remote with: git ls-remote %s", remote)}
		}
		return err
	}
	st, err := l.View()
	if err != nil {
		return err
	}
	contests := st.Contests()
	if opts.j.On() {
		out := syncJSON{Remote: res.Remote, Fetched: res.Fetched, NewFacts: res.NewFacts, Merged: res.Merge != ledger.MergeNone,
			Pushed: res.Pushed, Contested: []string{}, Merge: res.Merge, Risks: []string{}, Retracted: []string{}, Head: hashOrEmpty(res.Head),
			RemoteHead: hashOrEmpty(res.RemoteHead), Rounds: res.Rounds, Rewritten: res.Rewritten, Missing: res.Missing}
		for _, c := range contests {
			out.Contested = append(out.Contested, c.Claim.ID)
		}
		out.ContestedClaims = out.Contested
		for _, rk := range res.Risks {
			out.Risks = append(out.Risks, rk.ID)
		}
		for _, rt := range res.Retracted {
			out.Retracted = append(out.Retracted, rt.Ref)
		}
		return f.PrintJSON(&opts.j, out)
	}
	w := f.Out
	switch {
	case !res.Fetched && res.Rewritten:
		fmt.Fprintf(w, "%s has no ledger any more\n", remote)
	case !res.Fetched:
		fmt.Fprintf(w, "%s has no ledger yet\n", remote)
	case res.Merge == ledger.MergeNone:
		fmt.Fprintf(w, "fetched %s: nothing new\n", remote)
	default:
		fmt.Fprintf(w, "fetched %s: %s (%s)\n", remote, plural(res.NewFacts, "new fact"), res.Merge)
	}
	switch {
	case res.Pushed:
		fmt.Fprintf(w, "pushed refs/rally/ledger to %s\n", remote)
	case opts.noPush && !res.Head.IsZero() && res.Head != res.RemoteHead:
		fmt.Fprintf(w, "not pushed (--no-push); %s is behind: git rally sync %s\n", remote, remote)
	}
	for _, c := range contests {
		holder := "?"
		if c.Holder != nil {
			holder = fmt.Sprintf("%s by %s", c.Holder.ID, c.Holder.Owner())
		}
		fmt.Fprintf(w, "contested: claim %s by %s on %s; %s comes first in (clock, id) order and holds\n",
			c.Claim.ID, facts.Sanitize(c.Claim.Owner().String(), 200), c.Scope, facts.Sanitize(holder, 300))
	}
	for _, rk := range res.Risks {
		fmt.Fprintf(w, "recorded %s: risk claim-contested for %s\n", rk.ID, rk.Ref)
	}
	for _, rt := range res.Retracted {
		fmt.Fprintf(w, "retracted %s: another clone published the same claim-contested risk first\n", rt.Ref)
	}
	return nil
}

func (f *factory) warnRewritten(res *ledger.SyncResult, noPush bool) {
	what := fmt.Sprintf("the ledger on %s lost %s this clone saw there before (its history was rewritten or the ref deleted)",
		res.Remote, plural(res.Missing, "fact"))
	switch {
	case res.Pushed:
		fmt.Fprintf(f.Err, "git-rally: warning: %s; they are kept here and the union was pushed back\n", what)
	case noPush:
		fmt.Fprintf(f.Err, "git-rally: warning: %s; they are kept here\n", what)
		fmt.Fprintf(f.Err, "git-rally: hint: git rally sync %s\n", res.Remote)
	default:
		fmt.Fprintf(f.Err, "git-rally: warning: %s; they are kept here\n", what)
	}
}

func hashOrEmpty(h refs.Hash) string {
	if h.IsZero() {
		return ""
	}
	return h.String()
}

// syncRemote picks the remote: the argument, else git config rally.remote,
// else origin. It must be a configured remote: the tracking ref is named
// after it.
func syncRemote(dir, arg string) (string, error) {
	name := arg
	if name == "" {
		if v, err := refs.Git(dir, nil, "config", "--get", "rally.remote"); err == nil {
			name = strings.TrimSpace(v)
		}
	}
	if name == "" {
		name = "origin"
	}
	remotes, err := refs.Remotes(dir)
	if err != nil {
		return "", err
	}
	for _, r := range remotes {
		if r == name {
			return name, nil
		}
	}
	hint := "git remote add " + name + " <url>"
	if len(remotes) > 0 {
		hint = "git rally sync " + remotes[0] + "   (remotes: " + strings.Join(remotes, ", ") + ")"
	}
	if arg == "" {
		hint += "\nor choose the default: git config rally.remote <name>"
	}
	return "", &usageError{Msg: fmt.Sprintf("no remote named %q", name), Hint: hint}
}

// delayedWriter passes git's progress through only once the transfer has
// run for a while: a quick sync stays silent.
type delayedWriter struct {
	mu    sync.Mutex
	w     io.Writer
	now   func() time.Time
	start time.Time
	delay time.Duration
	open  bool // a line was written and not ended
}

func (d *delayedWriter) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.now().Sub(d.start) >= d.delay && len(p) > 0 {
		d.open = p[len(p)-1] != '\n'
		d.w.Write(p)
	}
	return len(p), nil
}

// finish ends a progress line left open by a carriage return.
func (d *delayedWriter) finish() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.open {
		fmt.Fprintln(d.w)
		d.open = false
	}
}
