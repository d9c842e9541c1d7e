package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/refs"
)

type initOptions struct {
	remote string
}

func newCmdInit(f *factory) *cobra.Command {
	opts := &initOptions{}
	c := &cobra.Command{
		Use:   "init [--remote <name>]",
		Short: "Set up the room: ledger root, .rally/ excluded, sync refspecs",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, args []string) error { return runInit(f, opts) },
	}
	c.Flags().StringVar(&opts.remote, "remote", "", "add fetch/push refspecs for this remote")
	return c
}

func runInit(f *factory, opts *initOptions) error {
	r, err := f.Repo()
	if err != nil {
		return err
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
		fmt.Fprintln(f.out, "created refs/rally/ledger")
	} else {
		fmt.Fprintln(f.out, "refs/rally/ledger exists")
	}
	if err := excludeRally(r.CommonDir); err != nil {
		return err
	}
	if opts.remote != "" {
		if err := addRemoteRefspecs(dirOf(r), opts.remote); err != nil {
			return err
		}
		fmt.Fprintf(f.out, "git fetch %s now brings the ledger to refs/rally-remotes/%s/ledger\n", opts.remote, opts.remote)
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

// addRemoteRefspecs makes plain git fetch and push carry the ledger.
func addRemoteRefspecs(dir, remote string) error {
	if _, err := refs.Git(dir, nil, "config", "--get", "remote."+remote+".url"); err != nil {
		return &usageError{msg: fmt.Sprintf("no remote %q", remote), hint: "git remote -v"}
	}
	fetch := fmt.Sprintf("+refs/rally/ledger:refs/rally-remotes/%s/ledger", remote)
	if err := addConfigOnce(dir, "remote."+remote+".fetch", fetch); err != nil {
		return err
	}
	// A push refspec replaces git's default (the current branch), so keep
	// that working too.
	if out, _ := refs.Git(dir, nil, "config", "--get-all", "remote."+remote+".push"); strings.TrimSpace(out) == "" {
		if err := addConfigOnce(dir, "remote."+remote+".push", "HEAD"); err != nil {
			return err
		}
	}
	return addConfigOnce(dir, "remote."+remote+".push", "refs/rally/ledger:refs/rally/ledger")
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
