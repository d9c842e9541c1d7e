package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/ledger"
	"github.com/git-rally/git-rally/refs"
)

type deinitOptions struct {
	deleteLedger bool
	j            jsonFlags
}

type deinitJSON struct {
	Hooks         []string `json:"hooks"`          // files rally's hooks were removed from
	Config        []string `json:"config"`         // config values removed (key=value)
	Exclude       bool     `json:"exclude"`        // the .rally/ line left info/exclude
	State         bool     `json:"state"`          // <common dir>/rally/ was removed
	LedgerDeleted []string `json:"ledger_deleted"` // refs deleted (--delete-ledger)
	Kept          []string `json:"kept,omitempty"` // what stays, and why
}

func newCmdDeinit(f *factory) *cobra.Command {
	opts := &deinitOptions{}
	c := &cobra.Command{
		Use:   "deinit [--delete-ledger]",
		Short: "Take rally out of this repository: hooks, refspecs, the exclude line, machine-local state",
		Long: `deinit undoes init and hooks install: it removes rally's hooks (git and every
agent host, putting back what was there), the fetch and push refspecs and
rally.remote that init --remote added, the .rally/ line in info/exclude and
the machine-local state under <common dir>/rally/ (caches, locks, records).

The ledger (refs/rally/ledger) is history and stays, so a later init finds
the room as it was; --delete-ledger deletes it and the fetched copies
(refs/rally-remotes/*) too. Agent worktrees under .rally/worktrees are never
touched: remove them first with git rally worktree remove.`,
		Example: examples()["deinit"],
		Args:    cobra.NoArgs,
		RunE:    func(c *cobra.Command, args []string) error { return runDeinit(f, opts) },
	}
	c.Flags().BoolVar(&opts.deleteLedger, "delete-ledger", false, "also delete refs/rally/ledger and refs/rally-remotes/*")
	addJSONFlags(c, &opts.j)
	return c
}

func runDeinit(f *factory, opts *deinitOptions) error {
	r, err := f.Repo()
	if err != nil {
		return err
	}
	dir := r.Dir()
	out := deinitJSON{Hooks: []string{}, Config: []string{}, LedgerDeleted: []string{}}
	wts, _ := r.Worktrees()
	rallyWts := 0
	for _, w := range wts {
		if strings.Contains(filepath.ToSlash(w.Path), "/.rally/worktrees/") {
			rallyWts++
		}
	}
	if rallyWts > 0 {
		return &facts.RefusedError{Code: "worktrees-left",
			Msg:  fmt.Sprintf("%d rally worktree(s) are still here; deinit never removes work", rallyWts),
			Hint: "git rally worktree list; git rally worktree remove <name> for each, then git rally deinit"}
	}

	removed, err := uninstallAllHooks(f)
	if err != nil {
		return err
	}
	out.Hooks = append(out.Hooks, removed...)

	remotes, _ := refs.Remotes(dir)
	for _, rm := range remotes {
		out.Config = append(out.Config, unsetValue(dir, "remote."+rm+".fetch", func(v string) bool {
			return v == ledger.FetchRefspec(rm) || strings.HasPrefix(strings.TrimPrefix(v, "+"), "refs/rally/")
		})...)
		pushKey := "remote." + rm + ".push"
		gone := unsetValue(dir, pushKey, func(v string) bool { return v == ledger.LedgerRef+":"+ledger.LedgerRef })
		out.Config = append(out.Config, gone...)
		// init added HEAD only when the remote had no push refspec; with
		// the ledger's gone it is alone again, and git's default is back.
		if rest, _ := refs.Git(dir, nil, "config", "--get-all", pushKey); len(gone) > 0 && strings.TrimSpace(rest) == "HEAD" {
			out.Config = append(out.Config, unsetValue(dir, pushKey, func(v string) bool { return v == "HEAD" })...)
		}
	}
	out.Config = append(out.Config, unsetValue(dir, "rally.remote", func(string) bool { return true })...)

	if out.Exclude, err = unexcludeRally(r.CommonDir); err != nil {
		return err
	}
	if opts.deleteLedger {
		list, _ := refs.Git(dir, nil, "for-each-ref", "--format=%(refname)", "refs/rally/", "refs/rally-remotes/")
		for _, ref := range strings.Fields(list) {
			if _, err := refs.Git(dir, nil, "update-ref", "-d", ref); err != nil {
				return fmt.Errorf("deleting %s: %w", ref, err)
			}
			out.LedgerDeleted = append(out.LedgerDeleted, ref)
		}
	} else if h, err := refs.Git(dir, nil, "rev-parse", "-q", "--verify", ledger.LedgerRef); err == nil && strings.TrimSpace(h) != "" {
		out.Kept = append(out.Kept, ledger.LedgerRef+" (the history; --delete-ledger deletes it)")
	}
	// Last: the ledger's own files (caches, locks) go once nothing of rally
	// runs any more.
	f.Close()
	f.ForgetLedger()
	state := filepath.Join(r.CommonDir, "rally")
	if _, err := os.Lstat(state); err == nil {
		if err := os.RemoveAll(state); err != nil {
			return fmt.Errorf("removing %s: %w", state, err)
		}
		out.State = true
	}
	if opts.j.On() {
		return f.PrintJSON(&opts.j, out)
	}
	for _, h := range out.Hooks {
		fmt.Fprintf(f.Out, "removed rally's hook from %s\n", h)
	}
	for _, c := range out.Config {
		fmt.Fprintf(f.Out, "removed git config %s\n", c)
	}
	if out.Exclude {
		fmt.Fprintln(f.Out, "removed .rally/ from info/exclude")
	}
	if out.State {
		fmt.Fprintf(f.Out, "removed machine-local state %s\n", state)
	}
	for _, ref := range out.LedgerDeleted {
		fmt.Fprintf(f.Out, "deleted %s\n", ref)
	}
	for _, k := range out.Kept {
		fmt.Fprintf(f.Out, "kept %s\n", k)
	}
	return nil
}

// uninstallAllHooks runs hooks uninstall for every host and returns the
// files it changed.
func uninstallAllHooks(f *factory) ([]string, error) {
	var buf, errb bytes.Buffer
	sub := newFactory(f.In, &buf, &errb)
	root := newRootCmd(sub)
	root.SetArgs([]string{"hooks", "uninstall", "--git", "--claude", "--codex", "--gemini", "--cursor", "--mcp", "--json"})
	root.SetOut(&buf)
	root.SetErr(&errb)
	err := root.Execute()
	sub.Close()
	if err != nil {
		return nil, fmt.Errorf("removing hooks: %w", err)
	}
	var res struct {
		Hooks []hookResultJSON `json:"hooks"`
	}
	if err := json.Unmarshal(buf.Bytes(), &res); err != nil {
		return nil, fmt.Errorf("reading what hooks uninstall did: %w", err)
	}
	var out []string
	for _, h := range res.Hooks {
		if h.Changed {
			out = append(out, h.Path)
		}
	}
	return out, nil
}

// unsetValue removes the values of a multi-valued key that match, and
// returns them as key=value.
func unsetValue(dir, key string, match func(string) bool) []string {
	cur, err := refs.Git(dir, nil, "config", "--get-all", key)
	if err != nil {
		return nil
	}
	var out []string
	for _, v := range strings.Split(strings.TrimSpace(cur), "\n") {
		if v == "" || !match(v) {
			continue
		}
		if _, err := refs.Git(dir, nil, "config", "--fixed-value", "--unset-all", key, v); err == nil {
			out = append(out, key+"="+v)
		}
	}
	return out
}

// unexcludeRally removes the .rally/ line init added to info/exclude.
func unexcludeRally(commonDir string) (bool, error) {
	p := filepath.Join(commonDir, "info", "exclude")
	b, err := os.ReadFile(p)
	if os.IsNotExist(err) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	var keep []string
	found := false
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if strings.TrimSpace(line) == ".rally/" {
			found = true
			continue
		}
		keep = append(keep, line)
	}
	if !found {
		return false, nil
	}
	return true, os.WriteFile(p, []byte(strings.Join(keep, "")), 0o666)
}
