package cli

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra/doc"
)

var updateMan = flag.Bool("update", false, "rewrite the embedded man pages (manpages/*.1) from the command tree")

// The embedded man pages are what cobra/doc makes of the command tree
// today. When a command, flag or help text changes, run
//
//	go test ./cmd/git-rally/cli -run TestManPages -update
func TestManPages(t *testing.T) {
	root := newRootCmd(newFactory(strings.NewReader(""), io.Discard, io.Discard))
	root.DisableAutoGenTag = true
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
