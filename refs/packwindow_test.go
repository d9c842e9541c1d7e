package refs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The git processes that read a whole ledger (cat-file streams, ls-tree
// of the tree) map its packs in small windows, a few at once: each is
// started with the three limits (argv recorded by a git that logs and
// runs the real one). Their RSS, not rally's, was a cold read's peak at a
// million facts (issue 31: 343 MB).
func TestWholeLedgerReadsMapPacksInWindows(t *testing.T) {
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	gd := gitRepo(t)
	st, _ := Open(gd)
	defer st.Close()
	var hs []Hash
	for i := 0; i < BatchThreshold+1; i++ {
		h, _ := st.WriteBlob([]byte(strings.Repeat("x", i)))
		hs = append(hs, h)
	}
	tree, err := st.WriteTree([]Entry{{Name: "a", Hash: hs[0]}})
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	log := filepath.Join(bin, "argv")
	script := "#!/bin/sh\nprintf '%s\\n' \"$*\" >> " + log + "\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	bs := st.NewBlobStream(func(int, []byte) {})
	for i, h := range hs {
		bs.Add(i, h)
	}
	if err := bs.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ReadBlobs(hs); err != nil {
		t.Fatal(err)
	}
	if err := st.WalkTree(tree, func([]byte, bool, Hash) {}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(log)
	runs := 0
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if !strings.Contains(line, "cat-file") && !strings.Contains(line, "ls-tree") {
			continue
		}
		runs++
		for _, want := range PackWindows() {
			if want != "-c" && !strings.Contains(line, want) {
				t.Errorf("git %s: without %s", line, want)
			}
		}
	}
	if runs < 3 {
		t.Fatalf("%d cat-file or ls-tree runs recorded, want at least 3:\n%s", runs, b)
	}
}
