package refs

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
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

// A packed delta is held to the limit by its result's size, read from the
// delta before it is applied; a small blob that is a delta of a larger
// one still reads.
func TestBlobCapPackedDelta(t *testing.T) {
	gd := gitRepo(t)
	var text bytes.Buffer
	for i := 0; text.Len() < 700<<10; i++ {
		fmt.Fprintf(&text, `{"v":1,"kind":"note","subject":"line %d of a fact that is long enough"}`+"\n", i*7919%100003)
	}
	small := hashObject(t, gd, text.Bytes())
	big := append(append([]byte(nil), text.Bytes()...), text.Bytes()[:500<<10]...)
	large := hashObject(t, gd, big)
	// git deltas against the larger object: huge is the base of both
	huge := hashObject(t, gd, append(append([]byte(nil), big...), text.Bytes()[:300<<10]...))
	cmd := exec.Command("git", "--git-dir", gd, "pack-objects", "-q", "--window=10", gd+"/objects/pack/pack")
	cmd.Stdin = strings.NewReader(small.String() + "\n" + large.String() + "\n" + huge.String() + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pack-objects: %v %s", err, out)
	}
	gitOut(t, gd, "prune-packed")
	idx, _ := filepath.Glob(filepath.Join(gd, "objects", "pack", "*.idx"))
	vp := gitOut(t, gd, "verify-pack", "-v", idx[0])
	deltas := map[string]bool{}
	for _, l := range strings.Split(vp, "\n") {
		if f := strings.Fields(l); len(f) == 7 {
			deltas[f[0]] = true // <id> blob <size> <size-in-pack> <offset> <depth> <base>
		}
	}
	if !deltas[small.String()] || !deltas[large.String()] {
		t.Skipf("git did not store the deltas this test reads:\n%s", vp)
	}
	st, err := Open(gd)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if b, err := st.ReadBlob(small); err != nil || !bytes.Equal(b, text.Bytes()) {
		t.Errorf("the small blob, a delta of a blob over the cap, does not read: %v", err)
	}
	before := InflatedBytes.Load()
	if _, err := st.ReadBlob(large); !errors.Is(err, ErrTooLarge) {
		t.Errorf("the large blob, a delta: %v, want ErrTooLarge", err)
	}
	if n := InflatedBytes.Load() - before; n != 0 {
		t.Errorf("%d bytes inflated for a refused blob", n)
	}
}
