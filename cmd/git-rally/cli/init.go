package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/ledger"
	"github.com/git-rally/git-rally/refs"
)

type initOptions struct {
	remote         string
	pushRefspec    bool
	pushRefspecSet bool
	sign           bool
}

func newCmdInit(f *factory) *cobra.Command {
	opts := &initOptions{}
	c := &cobra.Command{
		Use:   "init [--remote <name>]",
		Short: "Set up the room: ledger root, .rally/ excluded, sync refspecs",
		Long: `init is idempotent: it writes the ledger's root commit on refs/rally/ledger
when there is none and adds .rally/ to .git/info/exclude.

--remote <name> adds the fetch refspec
    +refs/rally/*:refs/rally-remotes/<name>/*
so plain git fetch <name> (and git pull) also bring the remote's ledger to
refs/rally-remotes/<name>/ledger (a pattern, so a remote without a ledger
is no error), and makes <name> the default of git rally sync when
rally.remote is unset.

It also adds the push refspecs HEAD (when the remote has no push refspec
yet, so plain git push still pushes the current branch) and
refs/rally/ledger:refs/rally/ledger, so plain git push <name> carries the
ledger too, never forced. When a teammate synced first that part of a plain
push is rejected ("[rejected] refs/rally/ledger"): run git rally sync, which
merges and pushes. --push-refspec=false leaves git push alone.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			opts.pushRefspecSet = c.Flags().Changed("push-refspec")
			return runInit(f, opts)
		},
	}
	c.Flags().BoolVar(&opts.sign, "sign", false, "sign every rally commit with user.signingKey (sets git config rally.sign true)")
	c.Flags().StringVar(&opts.remote, "remote", "", "make plain git fetch <name> bring the ledger; git rally sync defaults to it")
	c.Flags().BoolVar(&opts.pushRefspec, "push-refspec", true, "with --remote: also make plain git push <name> push the ledger (--push-refspec=false: leave git push alone)")
	return c
}

func runInit(f *factory, opts *initOptions) error {
	if c := opts.pushRefspecSet; c && opts.remote == "" {
		return &usageError{Msg: "--push-refspec goes with --remote <name>", Hint: "git rally init --remote origin --push-refspec"}
	}
	r, err := f.Repo()
	if err != nil {
		return err
	}
	if opts.sign {
		if err := enableSigning(r.CommonDir, r.Dir()); err != nil {
			return err
		}
	}
	l, err := f.Ledger()
	if err != nil {
		return err
	}
	created, err := l.Init()
	if err != nil {
		return err
	}
	if created {
		fmt.Fprintln(f.Out, "created refs/rally/ledger")
	} else {
		fmt.Fprintln(f.Out, "refs/rally/ledger exists")
	}
	if err := excludeRally(r.CommonDir); err != nil {
		return err
	}
	if opts.remote != "" {
		if err := addRemoteRefspecs(r.Dir(), opts.remote, opts.pushRefspec); err != nil {
			return err
		}
		fmt.Fprintf(f.Out, "git fetch %s now brings the ledger to refs/rally-remotes/%s/ledger\n", opts.remote, opts.remote)
		// A fresh clone sees the room at once: fetch the ledger now.
		// An unreachable remote is not an error here; sync will say.
		if err := refs.Fetch(r.Dir(), opts.remote, ledger.FetchRefspec(opts.remote), nil); err != nil {
			fmt.Fprintf(f.Err, "git-rally: warning: could not fetch the ledger of %s now: %s\n", facts.Sanitize(opts.remote, 100), facts.Sanitize(firstLine(err.Error()), 300))
		} else if st, err := l.Read(); err == nil {
			fmt.Fprintf(f.Out, "fetched the ledger of %s: %s in the room\n", facts.Sanitize(opts.remote, 100), plural(st.Facts, "fact"))
		}
		if opts.pushRefspec {
			fmt.Fprintf(f.Out, "git push %s now pushes the current branch and refs/rally/ledger (never forced)\n", opts.remote)
		} else {
			fmt.Fprintf(f.Out, "git rally sync %s shares the ledger (or: git push %s refs/rally/ledger)\n", opts.remote, opts.remote)
		}
	}
	return nil
}

// enableSigning sets rally.sign once the key it would use is known to
// sign, so a missing key changes nothing.
func enableSigning(commonDir, dir string) error {
	cfg := refs.ReadConfig(commonDir, "")
	s := ledger.NewSigner(cfg.Get("user.signingKey"), os.Getenv("SSH_AUTH_SOCK"))
	if err := s.Ready(); err != nil {
		return err
	}
	if _, err := refs.Git(dir, nil, "config", "rally.sign", "true"); err != nil {
		return err
	}
	return nil
}

// excludeRally adds .rally/ to info/exclude once.
func excludeRally(commonDir string) error {
	p := filepath.Join(commonDir, "info", "exclude")
	b, err := os.ReadFile(p)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) == ".rally/" {
			return nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
		return err
	}
	s := string(b)
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return os.WriteFile(p, []byte(s+".rally/\n"), 0o666)
}

// addRemoteRefspecs makes plain `git fetch <remote>` (and pull) bring the
// remote's ledger to refs/rally-remotes/<remote>/ledger. The refspec is a
// pattern on purpose: an exact one makes every plain fetch of a remote
// without a ledger fail ("couldn't find remote ref refs/rally/ledger").
//
// With pushRefspec it also adds push refspecs (SPEC §10). Any
// remote.<name>.push replaces push.default for that remote, so HEAD is
// added first to keep plain `git push` pushing the current branch; the
// ledger part of a plain push is rejected when a teammate synced first,
// and git rally sync (which merges) is the answer, never force.
func addRemoteRefspecs(dir, remote string, pushRefspec bool) error {
	remotes, err := refs.Remotes(dir)
	if err != nil {
		return err
	}
	found := false
	for _, r := range remotes {
		found = found || r == remote
	}
	if !found {
		return &usageError{Msg: fmt.Sprintf("no remote named %q", remote), Hint: "git remote add " + remote + " <url>"}
	}
	// An exact refspec written by an earlier version breaks plain fetch of
	// a remote without a ledger; the pattern replaces it.
	refs.Git(dir, nil, "config", "--unset-all", "remote."+remote+".fetch", `^\+?refs/rally/ledger:refs/rally-remotes/`)
	if err := addConfigOnce(dir, "remote."+remote+".fetch", ledger.FetchRefspec(remote)); err != nil {
		return err
	}
	if out, _ := refs.Git(dir, nil, "config", "--get", "rally.remote"); strings.TrimSpace(out) == "" {
		if _, err := refs.Git(dir, nil, "config", "rally.remote", remote); err != nil {
			return err
		}
	}
	if !pushRefspec {
		return nil
	}
	// Keep plain `git push` pushing the current branch: a push refspec
	// replaces git's default.
	if out, _ := refs.Git(dir, nil, "config", "--get-all", "remote."+remote+".push"); strings.TrimSpace(out) == "" {
		if err := addConfigOnce(dir, "remote."+remote+".push", "HEAD"); err != nil {
			return err
		}
	}
	return addConfigOnce(dir, "remote."+remote+".push", ledger.LedgerRef+":"+ledger.LedgerRef)
}

func addConfigOnce(dir, key, value string) error {
	out, _ := refs.Git(dir, nil, "config", "--get-all", key)
	for _, v := range strings.Split(out, "\n") {
		if strings.TrimSpace(v) == value {
			return nil
		}
	}
	_, err := refs.Git(dir, nil, "config", "--add", key, value)
	return err
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
