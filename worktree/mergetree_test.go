package worktree

import (
	"reflect"
	"testing"
)

func TestParseMergeTree(t *testing.T) {
	tree1 := "55ad0625f6177d209c7cac37901aa85d614ddc6e"
	tree2 := "6e04b856a95d9c732de97521dc81a715868531b0"
	out := "0\x00" + tree1 + "\x00f1\x00dir/f 2\x00\x00" + "1\x00" + tree2 + "\x00\x00"
	got, err := parseMergeTree(out, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []mergeResult{
		{Clean: false, Tree: tree1, Conflicts: []string{"f1", "dir/f 2"}},
		{Clean: true, Tree: tree2},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if _, err := parseMergeTree(out, 3); err == nil {
		t.Errorf("a missing result was not reported")
	}
	if _, err := parseMergeTree("fatal\x00x\x00\x00", 1); err == nil {
		t.Errorf("a bad status was not reported")
	}
}

func TestPredictMergesWritesNoObject(t *testing.T) {
	r := testRepo(t)
	dir := r.WorkTree
	mustGit(t, dir, "switch", "-q", "-c", "a")
	writeFile(t, dir+"/README", "by a\n")
	mustGit(t, dir, "commit", "-q", "-am", "a")
	mustGit(t, dir, "switch", "-q", "-c", "b", "main")
	writeFile(t, dir+"/README", "by b\n")
	mustGit(t, dir, "commit", "-q", "-am", "b")
	before := mustGit(t, dir, "count-objects", "-v")
	a, b, m := mustGit(t, dir, "rev-parse", "a"), mustGit(t, dir, "rev-parse", "b"), mustGit(t, dir, "rev-parse", "main")
	res, err := r.predictMerges([]merge{{a, b}, {m, a}})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Clean || !reflect.DeepEqual(res[0].Conflicts, []string{"README"}) {
		t.Errorf("a b: got %+v, want a conflict in README", res[0])
	}
	if !res[1].Clean {
		t.Errorf("main a: got %+v, want clean", res[1])
	}
	if after := mustGit(t, dir, "count-objects", "-v"); after != before {
		t.Errorf("objects changed:\n%s\n->\n%s", before, after)
	}
}
