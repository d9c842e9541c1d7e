package cli

import (
	"bytes"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"
)

var updateMan = flag.Bool("update", false, "rewrite the embedded man pages (manpages/*.1) from the command tree")

// The embedded man pages are what cobra/doc makes of the command tree
// today. When a command, flag or help text changes, run
//
//	go test ./cmd/git-rally/cli -run TestManPages -update
func TestManPages(t *testing.T) {
	root := newRootCmd(newFactory(strings.NewReader(""), io.Discard, io.Discard))
	root.DisableAutoGenTag = true
	escapeManMarkdown(root)
	dir := t.TempDir()
	date := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	h := &doc.GenManHeader{Section: "1", Source: "git-rally @VERSION@", Manual: "Git Rally Manual", Date: &date}
	if err := doc.GenManTree(root, h, dir); err != nil {
		t.Fatal(err)
	}
	gen, _ := filepath.Glob(filepath.Join(dir, "*.1"))
	want := map[string][]byte{}
	for _, p := range gen {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		want[filepath.Base(p)] = bytes.Replace(b, []byte(`"Jan 2000"`), []byte(`"@DATE@"`), 1)
	}
	if *updateMan {
		old, _ := filepath.Glob("manpages/*.1")
		for _, p := range old {
			os.Remove(p)
		}
		os.MkdirAll("manpages", 0o777)
		for n, b := range want {
			if err := os.WriteFile(filepath.Join("manpages", n), b, 0o666); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	have, _ := manPages.ReadDir("manpages")
	var stale []string
	for _, e := range have {
		b, _ := manPages.ReadFile("manpages/" + e.Name())
		w, ok := want[e.Name()]
		if !ok || !bytes.Equal(b, w) {
			stale = append(stale, e.Name())
		}
		delete(want, e.Name())
	}
	for n := range want {
		stale = append(stale, n+" (missing)")
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		t.Fatalf("the embedded man pages are out of date: %s\nrun: go test ./cmd/git-rally/cli -run TestManPages -update", strings.Join(stale, ", "))
	}
}

// escapeManMarkdown backslash-escapes the angle brackets of placeholders
// (<id>, <scope>...) outside `code` in the text cobra/doc hands to md2man
// as Markdown, where they would be read as HTML tags and dropped.
func escapeManMarkdown(c *cobra.Command) {
	esc := func(s string) string {
		lines := strings.Split(s, "\n")
		for l, line := range lines {
			if strings.HasPrefix(line, "\t") || strings.HasPrefix(line, "    ") {
				continue // an indented code block
			}
			parts := strings.Split(line, "`")
			for i := 0; i < len(parts); i += 2 {
				parts[i] = manPlaceholder.ReplaceAllStringFunc(parts[i], func(p string) string {
					return `\<` + p[1:len(p)-1] + `\>`
				})
			}
			lines[l] = strings.Join(parts, "`")
		}
		return strings.Join(lines, "\n")
	}
	c.Use, c.Short, c.Long = esc(c.Use), esc(c.Short), esc(c.Long)
	c.Flags().VisitAll(func(f *pflag.Flag) { f.Usage = esc(f.Usage) })
	c.PersistentFlags().VisitAll(func(f *pflag.Flag) { f.Usage = esc(f.Usage) })
	for _, sub := range c.Commands() {
		escapeManMarkdown(sub)
	}
}

// A page comes out with this build's version and a date, not the
// placeholders it is stored with.
func TestManPageTitle(t *testing.T) {
	b, err := manPage("git-rally-claim.1")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if strings.Contains(s, "@DATE@") || strings.Contains(s, "@VERSION@") || !strings.Contains(s, `.TH "GIT-RALLY-CLAIM" "1" "`) {
		t.Fatalf("title line:\n%s", s[:200])
	}
}

var manPlaceholder = regexp.MustCompile(`<[^<>\s]+>`)

// md2man reads "<id>" in the Markdown cobra/doc writes as an HTML tag and
// drops it, so a page said "git-rally receipt  [flags]". Every
// placeholder of a command's usage line, long help and flag help is in
// its page.
func TestManPagesKeepPlaceholders(t *testing.T) {
	root := newRootCmd(newFactory(strings.NewReader(""), io.Discard, io.Discard))
	var walk func(c *cobra.Command)
	checked := 0
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() && !sub.IsAdditionalHelpTopicCommand() {
				walk(sub)
			}
		}
		name := strings.ReplaceAll(c.CommandPath(), " ", "-") + ".1"
		b, err := manPages.ReadFile("manpages/" + name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			return
		}
		page := string(b)
		_, syn, _ := strings.Cut(page, ".SH SYNOPSIS\n")
		syn, _, _ = strings.Cut(syn, ".SH ")
		for _, p := range manPlaceholder.FindAllString(c.UseLine(), -1) {
			checked++
			if !strings.Contains(syn, p) {
				t.Errorf("%s: SYNOPSIS lost %s:\n%s", name, p, strings.TrimSpace(syn))
			}
		}
		text := c.Long
		c.NonInheritedFlags().VisitAll(func(fl *pflag.Flag) { text += "\n" + fl.Usage })
		for _, p := range manPlaceholder.FindAllString(text, -1) {
			checked++
			if !strings.Contains(page, p) {
				t.Errorf("%s: lost %s", name, p)
			}
		}
	}
	walk(root)
	if checked < 50 {
		t.Fatalf("only %d placeholders checked: the walk is broken", checked)
	}
}

// The footer of a page is its source (left), date (centre) and title
// (right) on one line: a pseudo-version (v0.0.0-<time>-<commit>+dirty)
// ran into the date and man printed "d05Dec62026e". The source is short
// and, where groff is installed, the rendered footer has both intact.
func TestManPageFooter(t *testing.T) {
	v := versionInfo{Version: "v0.0.0-20261202034107-d05fe16abcde+dirty", Commit: "d05fe16abcde0123456789", Time: "2026-12-02T03:41:07Z", Modified: true}
	for _, name := range []string{"git-rally.1", "git-rally-check-before-complete.1"} {
		b, err := manPageFor(name, v)
		if err != nil {
			t.Fatal(err)
		}
		th, _, _ := strings.Cut(strings.SplitN(string(b), ".TH ", 2)[1], "\n")
		want := `"1" "Dec 2026" "git-rally d05fe16abcde-dirty" "Git Rally Manual"`
		if !strings.Contains(th, want) {
			t.Errorf("%s: .TH %s\nwant it to hold %s", name, th, want)
		}
		nroff, err := exec.LookPath("nroff")
		if err != nil {
			continue
		}
		cmd := exec.Command(nroff, "-man", "-rLL=80n", "-rcR=1")
		cmd.Stdin = bytes.NewReader(b)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("nroff: %v", err)
		}
		lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
		foot := lines[len(lines)-1]
		for _, w := range []string{"git-rally d05fe16abcde-dirty", "Dec 2026", strings.ToUpper(strings.TrimSuffix(name, ".1")) + "(1)"} {
			if !strings.Contains(foot, w) {
				t.Errorf("%s: footer %q lacks %q", name, foot, w)
			}
		}
	}
	for _, c := range []struct {
		v    versionInfo
		want string
	}{
		{versionInfo{Version: "v1.2.3", Commit: "abc"}, "git-rally v1.2.3"},
		{versionInfo{Version: "v1.3.0-rc.1"}, "git-rally v1.3.0-rc.1"},
		{versionInfo{Version: "(devel)"}, "git-rally (devel)"},
		{versionInfo{Version: "(devel)", Commit: "d05fe16abcde0123456789"}, "git-rally d05fe16abcde"},
		{versionInfo{Version: "v1.2.4-0.20261202034107-d05fe16abcde"}, "git-rally d05fe16abcde"},
	} {
		if got := c.v.manSource(); got != c.want {
			t.Errorf("%+v: source %q, want %q", c.v, got, c.want)
		}
	}
}
