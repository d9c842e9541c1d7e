package refs

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// hashObject writes data as a loose blob with git.
func hashObject(t *testing.T, gd string, data []byte) Hash {
	t.Helper()
	cmd := exec.Command("git", "--git-dir", gd, "hash-object", "-w", "--stdin")
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	h, err := ParseHash(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// A blob over MaxBlob (a zlib bomb: 16 MiB of zeros in about 16 KiB) is
// refused from its declared size, loose or packed, before it is inflated;
// streams through cat-file hand over a stand-in, never the blob.
func TestBlobCapBeforeInflating(t *testing.T) {
	gd := gitRepo(t)
	bomb := hashObject(t, gd, make([]byte, 16<<20))
	line := hashObject(t, gd, append(bytes.Repeat([]byte(`{"v":1,"kind":"note","subject":"aaaaaaaa"}`), (2<<20)/40), '\n'))
	small := hashObject(t, gd, []byte("{}\n"))
	read := func(where string) {
		st, err := Open(gd)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		for _, h := range []Hash{bomb, line} {
			before := InflatedBytes.Load()
			_, err := st.ReadBlob(h)
			if !errors.Is(err, ErrTooLarge) {
				t.Errorf("%s: ReadBlob of an oversized blob: %v, want ErrTooLarge", where, err)
			}
			if n := InflatedBytes.Load() - before; n > MaxBlob {
				t.Errorf("%s: %d bytes inflated for a refused blob, want at most %d", where, n, MaxBlob)
			}
		}
		if b, err := st.ReadBlob(small); err != nil || string(b) != "{}\n" {
			t.Errorf("%s: small blob: %q %v", where, b, err)
		}
		before := InflatedBytes.Load()
		var got [3][]byte
		if err := st.StreamBlobs([]Hash{bomb, small, line}, func(i int, data []byte) { got[i] = append([]byte(nil), data...) }); err != nil {
			t.Fatal(err)
		}
		if n := InflatedBytes.Load() - before; n > MaxBlob {
			t.Errorf("%s: a stream took %d bytes, want at most %d", where, n, MaxBlob)
		}
		if size, ok := Oversize(got[0]); !ok || size != 16<<20 {
			t.Errorf("%s: stream of the bomb: %q, want its stand-in", where, got[0])
		}
		if _, ok := Oversize(got[2]); !ok {
			t.Errorf("%s: stream of the long line: %.40q, want its stand-in", where, got[2])
		}
		if string(got[1]) != "{}\n" {
			t.Errorf("%s: stream of the small blob: %q", where, got[1])
		}
	}
	read("loose")
	gitOut(t, gd, "update-ref", "refs/keep/a", gitOut(t, gd, "commit-tree", gitOut(t, gd, "mktree"), "-m", "x"))
	cmd := exec.Command("git", "--git-dir", gd, "pack-objects", "-q", gd+"/objects/pack/pack")
	cmd.Stdin = strings.NewReader(bomb.String() + "\n" + line.String() + "\n" + small.String() + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pack-objects: %v %s", err, out)
	}
	gitOut(t, gd, "prune-packed")
	read("packed")
}
