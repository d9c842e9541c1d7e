package refs

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Objects moved from loose files into a pack while a Store is open are
// still found (the pack list is re-read on a miss), and the pack leaves no
// loose ledger objects.
func TestPackUnderAnOpenStore(t *testing.T) {
	gd := gitRepo(t)
	st, _ := Open(gd)
	defer st.Close()
	var last Hash
	var trees []Hash
	for i := 0; i < 50; i++ {
		b, _ := st.WriteBlob([]byte(fmt.Sprintf("fact %d\n", i)))
		tr, _ := st.WriteTree([]Entry{{Name: "f.json", Hash: b}})
		var parents []Hash
		if !last.IsZero() {
			parents = []Hash{last}
		}
		c, _ := st.WriteCommit(Commit{Tree: tr, Parents: parents, Message: "x\n", When: time.Unix(0, 0)})
		last = c
		trees = append(trees, tr)
	}
	l, _ := st.LockRef("refs/rally/ledger")
	l.Commit(last)
	l.Unlock()
	// Make the store load its (empty) pack index before the pack exists.
	st.ReadCommit(last)
	if err := st.Pack(); err != nil {
		t.Fatal(err)
	}
	if n := gitOut(t, gd, "count-objects"); n != "0 objects, 0 kilobytes" {
		t.Fatalf("after the pack: %s", n)
	}
	for _, tr := range trees {
		if _, err := st.ReadTree(tr); err != nil {
			t.Fatalf("tree %s lost after the pack: %v", tr, err)
		}
	}
	gitOut(t, gd, "fsck", "--strict", "--no-dangling")
}

func TestMaybePackThreshold(t *testing.T) {
	gd := gitRepo(t)
	st, _ := Open(gd)
	defer st.Close()
	if st.MaybePack() {
		t.Fatalf("packed an empty repository")
	}
	// 16 files in objects/17 estimate 4096 loose objects; a pack started
	// less than a minute ago holds the next one back.
	dir := filepath.Join(gd, "objects", "17")
	os.MkdirAll(dir, 0o777)
	for i := 0; i < 16; i++ {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("%038d", i)), nil, 0o444)
	}
	if st.LooseEstimate() != PackLooseObjects {
		t.Fatalf("estimate %d", st.LooseEstimate())
	}
	os.MkdirAll(filepath.Join(gd, "rally"), 0o777)
	os.WriteFile(filepath.Join(gd, "rally", "pack.stamp"), nil, 0o666)
	if st.MaybePack() {
		t.Fatalf("packed again within a minute")
	}
}
