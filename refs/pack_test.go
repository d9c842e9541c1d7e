package refs

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	if ok, err := st.MaybePack(); ok || err != nil {
		t.Fatalf("packed an empty repository (%v)", err)
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
	if ok, err := st.MaybePack(); ok || err != nil {
		t.Fatalf("packed again within a minute (%v)", err)
	}
}

// The pack stores the ledger's objects without compression, packing only
// those since the head it packed last, and leaves the user's loose
// objects to the repack after it, which compresses them as git does; the
// ledger's objects stay stored when the repack rolls their packs up.
func TestPackStoresLedgerObjects(t *testing.T) {
	gd := gitRepo(t)
	st, _ := Open(gd)
	defer st.Close()
	user := strings.TrimSpace(gitIn(t, gd, strings.Repeat("user text ", 400), "hash-object", "-w", "--stdin"))
	var last Hash
	var blobs []string
	appendFacts := func(n int) {
		for i := 0; i < n; i++ {
			b, _ := st.WriteBlob([]byte(fmt.Sprintf(`{"v":1,"kind":"note","body":"%s %d"}`+"\n", strings.Repeat("same words ", 30), len(blobs))))
			blobs = append(blobs, b.String())
			tr, _ := st.WriteTree([]Entry{{Name: "f.json", Hash: b}})
			var parents []Hash
			if !last.IsZero() {
				parents = []Hash{last}
			}
			last, _ = st.WriteCommit(Commit{Tree: tr, Parents: parents, Message: "x\n", When: time.Unix(int64(len(blobs)), 0)})
		}
		l, _ := st.LockRef(ledgerRef)
		l.Commit(last)
		l.Unlock()
	}
	// inPack gives each packed object's size and size in its pack.
	inPack := func() map[string][2]int {
		out := map[string][2]int{}
		idxs, _ := filepath.Glob(filepath.Join(gd, "objects", "pack", "*.idx"))
		for _, idx := range idxs {
			for _, line := range strings.Split(gitOut(t, gd, "verify-pack", "-v", idx), "\n") {
				f := strings.Fields(line)
				if len(f) >= 5 && len(f[0]) == 40 {
					var size, packed int
					fmt.Sscan(f[2], &size)
					fmt.Sscan(f[3], &packed)
					out[f[0]] = [2]int{size, packed}
				}
			}
		}
		return out
	}
	check := func(when string) {
		t.Helper()
		if n := gitOut(t, gd, "count-objects"); n != "0 objects, 0 kilobytes" {
			t.Fatalf("%s: %s", when, n)
		}
		p := inPack()
		for _, b := range blobs {
			if sz, ok := p[b]; !ok || sz[1] < sz[0] {
				t.Fatalf("%s: ledger blob %s packed in %d bytes of %d (%v): not stored", when, b, sz[1], sz[0], ok)
			}
		}
		if sz, ok := p[user]; !ok || sz[1] > sz[0]/4 {
			t.Fatalf("%s: the user's blob packed in %d bytes of %d (%v): not compressed", when, sz[1], sz[0], ok)
		}
		if note, _ := os.ReadFile(filepath.Join(gd, "rally", "packed-ledger")); strings.TrimSpace(string(note)) != last.String() {
			t.Fatalf("%s: packed-ledger notes %q, want %s", when, note, last)
		}
		gitOut(t, gd, "fsck", "--strict", "--no-dangling")
	}
	os.MkdirAll(filepath.Join(gd, "rally"), 0o777)
	appendFacts(40)
	if err := st.Pack(); err != nil {
		t.Fatal(err)
	}
	check("first pack")
	first := last
	appendFacts(40)
	revs, ok := st.ledgerPackRevs()
	if !ok || len(revs) != 2 || revs[1] != "^"+first.String() {
		t.Fatalf("the second pack asks for %v, want the head and ^%s", revs, first)
	}
	if err := st.Pack(); err != nil {
		t.Fatal(err)
	}
	check("second pack")
	// MaybePack does the same, its repack in the background (here run
	// in the foreground, to check its result).
	appendFacts(40)
	defer func(n int, start func(string, ...string) error) { packLoose, startPack = n, start }(packLoose, startPack)
	packLoose = 0
	startPack = func(dir string, args ...string) error {
		_, err := Git(dir, nil, args...)
		return err
	}
	os.Remove(filepath.Join(gd, "rally", "pack.stamp"))
	if ok, err := st.MaybePack(); !ok || err != nil {
		t.Fatalf("MaybePack: %v %v", ok, err)
	}
	check("MaybePack")
	if _, ok := st.ledgerPackRevs(); ok {
		t.Fatalf("nothing new, but the ledger would be packed again")
	}
}

func gitIn(t *testing.T, gitDir, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"--git-dir", gitDir}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v %s", args, err, out)
	}
	return string(out)
}

// A pack that fails says so, and notes nothing: the ledger's objects it
// did not pack are packed next time.
func TestPackErrors(t *testing.T) {
	gd := gitRepo(t)
	st, _ := Open(gd)
	defer st.Close()
	os.MkdirAll(filepath.Join(gd, "rally"), 0o777)
	note := filepath.Join(gd, "rally", "packed-ledger")
	b, _ := st.WriteBlob([]byte("fact\n"))
	tr, _ := st.WriteTree([]Entry{{Name: "f.json", Hash: b}})
	c, _ := st.WriteCommit(Commit{Tree: tr, Message: "x\n", When: time.Unix(0, 0)})
	l, _ := st.LockRef(ledgerRef)
	l.Commit(c)
	l.Unlock()

	// The note cannot be written: a directory stands in its way.
	os.MkdirAll(note+".tmp", 0o777)
	if err := st.Pack(); err == nil || !strings.Contains(err.Error(), "noting the ledger's pack") {
		t.Fatalf("Pack with an unwritable note: %v", err)
	}
	if _, err := os.Stat(note); err == nil {
		t.Fatalf("a note was written")
	}
	os.Remove(note + ".tmp")

	// pack-objects fails: the ledger's head is missing.
	os.WriteFile(filepath.Join(gd, "refs", "rally", "ledger"), []byte(strings.Repeat("ab", 20)+"\n"), 0o666)
	var ge *GitError
	if err := st.Pack(); !errors.As(err, &ge) || ge.Args[0] != "pack-objects" {
		t.Fatalf("Pack with a missing head: %v, want pack-objects' error", err)
	}
	defer func(n int, start func(string, ...string) error) { packLoose, startPack = n, start }(packLoose, startPack)
	packLoose = 0
	started := false
	startPack = func(string, ...string) error { started = true; return nil }
	if ok, err := st.MaybePack(); ok || !errors.As(err, &ge) || started {
		t.Fatalf("MaybePack with a missing head: %v %v, repack started %v", ok, err, started)
	}
	if _, err := os.Stat(note); err == nil {
		t.Fatalf("a note was written")
	}
}
