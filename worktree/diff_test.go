package worktree

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/git-rally/git-rally/facts"
)

// repoState is every ref, the object count and the index of the main
// checkout: what a read-only prediction must leave as it was.
func repoState(tb testing.TB, r *Repo) string {
	return mustGit(tb, r.WorkTree, "for-each-ref") + "\n" + mustGit(tb, r.WorkTree, "count-objects", "-v") + "\n" +
		mustGit(tb, r.WorkTree, "ls-files", "-s", "--debug")
}

func TestBranchDiff(t *testing.T) {
	r := testRepo(t)
	writeFile(t, r.WorkTree+"/src/app.go", "package app\n\nfunc A() {}\n")
	mustGit(t, r.WorkTree, "add", ".")
	mustGit(t, r.WorkTree, "commit", "-q", "-m", "app")
	a, err := r.Add("a", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.Add("b", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.Add("c", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, a.Path+"/src/app.go", "package app\n\nfunc A() { println(\"a\") }\n")
	writeFile(t, a.Path+"/notes <b>.txt", "one\ntwo\n")
	mustGit(t, a.Path, "add", ".")
	mustGit(t, a.Path, "commit", "-q", "-m", "a")
	writeFile(t, b.Path+"/src/app.go", "package app\n\nfunc A() { println(\"b\") }\n")
	mustGit(t, b.Path, "commit", "-q", "-am", "b")
	writeFile(t, c.Path+"/other.txt", "c\n")
	mustGit(t, c.Path, "add", ".")
	mustGit(t, c.Path, "commit", "-q", "-m", "c")

	before := repoState(t, r)
	d, err := r.Diff("rally/a", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if after := repoState(t, r); after != before {
		t.Errorf("Diff changed the repository:\n%s\n->\n%s", before, after)
	}
	if d.Base != "main" || d.Revision != mustGit(t, r.WorkTree, "rev-parse", "rally/a") || d.BaseHead != mustGit(t, r.WorkTree, "rev-parse", "main") {
		t.Errorf("base %q %q revision %q", d.Base, d.BaseHead, d.Revision)
	}
	want := []FileChange{{Path: "notes <b>.txt", Added: 2}, {Path: "src/app.go", Added: 1, Removed: 1}}
	if !reflect.DeepEqual(d.Files, want) {
		t.Errorf("files %+v, want %+v", d.Files, want)
	}
	if !strings.HasPrefix(d.Diff, "diff --git a/notes <b>.txt") || !strings.Contains(d.Diff, "+func A() { println(\"a\") }\n") {
		t.Errorf("diff:\n%s", d.Diff)
	}
	if want := []Pair{{A: "rally/a", B: "rally/b", Files: []string{"src/app.go"}}}; !reflect.DeepEqual(d.Conflicts, want) {
		t.Errorf("conflicts %+v, want %+v", d.Conflicts, want)
	}
	// A branch that is not live is not predicted against.
	d, err = r.Diff("rally/a", "main", func(b string) bool { return b != "rally/b" })
	if err != nil || len(d.Conflicts) != 0 {
		t.Errorf("with rally/b not live: %+v, %v", d.Conflicts, err)
	}
	for _, bad := range []string{"main", "rally/nope", "rally/../main", "rally/-x"} {
		var ue *facts.UsageError
		if _, err := r.Diff(bad, "", nil); !errors.As(err, &ue) {
			t.Errorf("Diff(%q): %v, want a usage error", bad, err)
		}
	}
}

// RallyBranches reads the ref files as git would: loose refs, packed refs,
// a loose ref over its packed entry; the same answer as for-each-ref.
func TestRallyBranchesReadsRefFiles(t *testing.T) {
	r := testRepo(t)
	for _, n := range []string{"a", "b", "deep/c"} {
		mustGit(t, r.WorkTree, "branch", "rally/"+n)
	}
	mustGit(t, r.WorkTree, "pack-refs", "--all")
	writeFile(t, r.WorkTree+"/x", "x\n")
	mustGit(t, r.WorkTree, "add", "x")
	mustGit(t, r.WorkTree, "commit", "-q", "-m", "x")
	mustGit(t, r.WorkTree, "branch", "-f", "rally/b")       // loose over packed
	mustGit(t, r.WorkTree, "branch", "rally/d")             // loose only
	mustGit(t, r.WorkTree, "branch", "rallyx/not-an-agent") // not under rally/
	got, ok := r.readRallyRefs()
	if !ok {
		t.Fatal("the ref files were not read")
	}
	var want []BranchHead
	for _, line := range strings.Split(mustGit(t, r.WorkTree, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads/rally/"), "\n") {
		b, h, _ := strings.Cut(line, " ")
		want = append(want, BranchHead{b, h})
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read %v, git says %v", got, want)
	}
}
