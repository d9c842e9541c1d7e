package testscripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docs/ARCHITECTURE.md is the map: these tests keep it true. Every file or
// directory it (or a topic document it links) names in backquotes exists,
// every package of the module is on it, and its links lead somewhere.

// The documents whose paths are checked: the map and the topic documents
// (not bench/README.md: it also records code that was measured and removed).
var mapDocs = []string{
	"docs/ARCHITECTURE.md", "docs/ledger.md", "docs/sessions.md", "docs/web.md",
	"docs/cli.md", "docs/hooks.md", "docs/plans.md", "docs/sync.md", "docs/worktrees.md",
	"docs/hosts.md",
}

// A path in backquotes: a word with a slash or a source file's suffix,
// without placeholders (<noun>, *, {a,b}) or spaces.
var docPath = regexp.MustCompile("`([A-Za-z0-9_./-]+(?:/|\\.go|\\.md|\\.txtar|\\.sh))`")

// Where a short path is looked up: the module's root, then cli's parent (the
// documents say cli/room_json.go for cmd/git-rally/cli/room_json.go).
var docRoots = []string{"", "cmd/git-rally"}

// Paths that are not files of this repository: the repository's own git and
// rally state, the agent hosts' files in a user's repository, targets.
var notRepoPath = regexp.MustCompile(`^(\.|/|~|refs/|rally/|hooks/(installed|shown)/|hosts/<|cache/|verdicts/|facts/YYYY|state/|objects/|docs/(checkout|api|db|x|new)\.md|src/|\.\.)`)

func TestArchitecturePathsExist(t *testing.T) {
	for _, doc := range mapDocs {
		b, err := os.ReadFile(filepath.Join("..", doc))
		if err != nil {
			t.Errorf("%s: %v", doc, err)
			continue
		}
		for _, m := range docPath.FindAllStringSubmatch(string(b), -1) {
			p := m[1]
			if notRepoPath.MatchString(p) || !strings.Contains(p, "/") && !strings.HasSuffix(p, ".md") {
				continue // a bare file name: its package is named beside it
			}
			if !docPathExists(p) {
				t.Errorf("%s names `%s`, which is not in the repository", doc, p)
			}
		}
	}
}

func docPathExists(p string) bool {
	for _, root := range docRoots {
		if _, err := os.Stat(filepath.Join("..", root, p)); err == nil {
			return true
		}
	}
	return false
}

// Every relative link of the map and its topic documents names a file that
// exists, and an anchor (#...) a heading of that file.
func TestArchitectureLinks(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)#\s]*)(#[^)\s]*)?\)`)
	for _, doc := range mapDocs {
		b, err := os.ReadFile(filepath.Join("..", doc))
		if err != nil {
			continue // TestArchitecturePathsExist reports it
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target, anchor := m[1], strings.TrimPrefix(m[2], "#")
			if strings.Contains(target, "://") {
				continue
			}
			file := filepath.Join("..", filepath.Dir(doc), target)
			if target == "" {
				file = filepath.Join("..", doc)
			}
			tb, err := os.ReadFile(file)
			if err != nil {
				t.Errorf("%s links %s: %v", doc, m[0], err)
				continue
			}
			if anchor != "" && !hasAnchor(string(tb), anchor) {
				t.Errorf("%s links %s: no heading makes the anchor #%s", doc, m[0], anchor)
			}
		}
	}
}

// hasAnchor reports whether a heading of md makes anchor as GitHub makes
// it: lower case, punctuation dropped, spaces to hyphens.
func hasAnchor(md, anchor string) bool {
	drop := regexp.MustCompile(`[^\p{L}\p{N} _-]`)
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(line, "#"))
		if strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(h), ""), " ", "-") == anchor {
			return true
		}
	}
	return false
}

// Every package of the module but the benchmarks' is on the map's package
// list, and everything the list names is a package.
func TestArchitectureListsEveryPackage(t *testing.T) {
	out, err := exec.Command("go", "list", "github.com/git-rally/git-rally/...").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	b, err := os.ReadFile("../docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	// The list is the first fenced block: one package a line, first word.
	listed := map[string]bool{}
	parts := strings.SplitN(string(b), "```", 3)
	if len(parts) < 3 {
		t.Fatal("docs/ARCHITECTURE.md has no package list (a fenced block)")
	}
	for _, line := range strings.Split(parts[1], "\n") {
		if f := strings.Fields(line); len(f) > 0 && !strings.HasPrefix(line, " ") {
			listed[f[0]] = true
		}
	}
	pkgs := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		p = strings.TrimPrefix(p, "github.com/git-rally/git-rally/")
		pkgs[p] = true
		if !listed[p] && !strings.HasPrefix(p, "bench/") {
			t.Errorf("package %s is not on docs/ARCHITECTURE.md's package list", p)
		}
	}
	for p := range listed {
		if !pkgs[p] && p != "bench" {
			t.Errorf("docs/ARCHITECTURE.md lists %s, which is not a package", p)
		}
	}
}
