package cli

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
)

// `git rally --help` is git's: it runs `git help rally`, which opens the
// man page git-rally(1). man finds pages for a binary on PATH in
// <bin>/../share/man, so `man --install` writes them there.
//
// The pages are generated from the command tree by cobra/doc when the
// commands change (`go test ./cmd/git-rally/cli -run TestManPages
// -update`; the test fails while they are out of date) and embedded: the
// Markdown converter cobra/doc links costs 0.4 ms of package
// initialisation in every process, every `git rally claim` included, for
// a command run once per install.

//go:embed manpages/*.1
var manPages embed.FS

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
		RunE: func(c *cobra.Command, args []string) error { return runMan(f, opts) },
	}
	c.Flags().BoolVar(&opts.install, "install", false, "write every page into <bin>/../share/man/man1")
	c.Flags().StringVar(&opts.dir, "dir", "", "with --install: write the pages into this directory instead")
	return c
}

// manPage returns an embedded page with this build's version and date in
// its .TH line (the pages are generated with placeholders there).
func manPage(name string) ([]byte, error) { return manPageFor(name, readVersion()) }

func manPageFor(name string, v versionInfo) ([]byte, error) {
	b, err := manPages.ReadFile("manpages/" + name)
	if err != nil {
		return nil, err
	}
	when := time.Now()
	if t, err := time.Parse(time.RFC3339, v.Time); err == nil {
		when = t // the build's, so a build's pages do not change
	}
	s := string(b)
	s = strings.Replace(s, `"@DATE@"`, `"`+when.Format("Jan 2006")+`"`, 1)
	s = strings.Replace(s, `"git-rally @VERSION@"`, `"`+v.manSource()+`"`, 1)
	return []byte(s), nil
}

// pseudoVersion matches a Go pseudo-version's tail: -[pre.]<14 digits>-<12 hex>.
var pseudoVersion = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`[-.](\d{14})-([0-9a-f]{12})(\+.*)?$`)
})

// manSource is the footer's left field: a page's footer is one line of
// source, date and title, and a pseudo-version
// (v0.0.0-20261202034107-d05fe16abcde+dirty) ran into the date. A release
// is its tag; a build between tags is its commit, which says the same in
// a third of the width (the date is already in the centre).
func (v versionInfo) manSource() string {
	s := v.Version
	if m := pseudoVersion().FindStringSubmatch(s); m != nil {
		s = m[2]
		if strings.HasPrefix(m[3], "+dirty") {
			s += "-dirty"
		}
	} else if s == "(devel)" && len(v.Commit) >= 12 {
		s = v.Commit[:12]
		if v.Modified {
			s += "-dirty"
		}
	}
	return "git-rally " + s
}

func runMan(f *factory, opts *manOptions) error {
	if !opts.install {
		if opts.dir != "" {
			return usagef("--dir goes with --install")
		}
		b, err := manPage("git-rally.1")
		if err != nil {
			return err
		}
		_, err = f.Out.Write(b)
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
	names, err := fs.Glob(manPages, "manpages/*.1")
	if err != nil {
		return err
	}
	for _, n := range names {
		b, err := manPage(filepath.Base(n))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(n)), b, 0o666); err != nil {
			return fmt.Errorf("writing man pages into %s: %w", dir, err)
		}
	}
	fmt.Fprintf(f.Out, "wrote %d man pages into %s\n", len(names), dir)
	fmt.Fprintf(f.Err, "git-rally: hint: git rally --help (or man git-rally); if man does not find it, add %s to MANPATH\n", filepath.Dir(dir))
	return nil
}
