package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// `git rally --help` is git's: it runs `git help rally`, which opens the
// man page git-rally(1). man finds pages for a binary on PATH in
// <bin>/../share/man, so `man --install` writes them there.

type manOptions struct {
	install bool
	dir     string
}

func newCmdMan(f *factory) *cobra.Command {
	opts := &manOptions{}
	c := &cobra.Command{
		Use:   "man [--install [--dir D]]",
		Short: "Print the git-rally(1) man page, or install every page where man finds them",
		Long: `man prints the git-rally(1) page (roff) on stdout. --install writes one page
per command (git-rally.1, git-rally-claim.1, git-rally-hooks-install.1, ...)
into <bin>/../share/man/man1 next to the installed git-rally binary, where
man looks for the pages of a program on PATH; then git rally --help (which
git turns into git help rally) and man git-rally-claim work. --dir writes
them elsewhere.`,
		Example: `  git rally man --install
  git rally --help
  man git-rally-claim
  git rally man | man -l -`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error { return runMan(f, opts, c.Root()) },
	}
	c.Flags().BoolVar(&opts.install, "install", false, "write every page into <bin>/../share/man/man1")
	c.Flags().StringVar(&opts.dir, "dir", "", "with --install: write the pages into this directory instead")
	return c
}

func manHeader() *doc.GenManHeader {
	v := readVersion()
	h := &doc.GenManHeader{Section: "1", Source: "git-rally " + v.Version, Manual: "Git Rally Manual"}
	if t, err := time.Parse(time.RFC3339, v.Time); err == nil {
		h.Date = &t // the build's, so a build's pages do not change
	}
	return h
}

func runMan(f *factory, opts *manOptions, root *cobra.Command) error {
	if !opts.install {
		if opts.dir != "" {
			return usagef("--dir goes with --install")
		}
		var buf bytes.Buffer
		if err := doc.GenMan(root, manHeader(), &buf); err != nil {
			return err
		}
		_, err := f.out.Write(buf.Bytes())
		return err
	}
	dir := opts.dir
	if dir == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("finding the git-rally binary: %w", err)
		}
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		dir = filepath.Join(filepath.Dir(filepath.Dir(exe)), "share", "man", "man1")
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	root.DisableAutoGenTag = true
	if err := doc.GenManTree(root, manHeader(), dir); err != nil {
		return fmt.Errorf("writing man pages into %s: %w", dir, err)
	}
	pages, _ := filepath.Glob(filepath.Join(dir, "git-rally*.1"))
	sort.Strings(pages)
	fmt.Fprintf(f.out, "wrote %d man pages into %s\n", len(pages), dir)
	fmt.Fprintf(f.err, "git-rally: hint: git rally --help (or man git-rally); if man does not find it, add %s to MANPATH\n", filepath.Dir(dir))
	return nil
}
