package refs

import (
	"bytes"
	"compress/zlib"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// The hand-built stored zlib stream inflates to the object, and git reads
// the objects it makes, across the 64 KiB block boundary too.
func TestStoredZlib(t *testing.T) {
	gd := gitRepo(t)
	st, err := Open(gd)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, n := range []int{0, 1, 100, 0xffff - 9, 0xffff - 8, 0xffff, 0x10000, 3*0xffff + 17} {
		data := bytes.Repeat([]byte("rally\n"), n/6+1)[:n]
		z := storedZlib(plumbing.BlobObject, data)
		r, err := zlib.NewReader(bytes.NewReader(z))
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		got, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("%d bytes: inflating: %v", n, err)
		}
		if want := "blob " + itoa(n) + "\x00" + string(data); string(got) != want {
			t.Fatalf("%d bytes: inflates to %d bytes, want %d", n, len(got), len(want))
		}
		h, err := st.WriteBlob(data)
		if err != nil {
			t.Fatal(err)
		}
		if size := gitOut(t, gd, "cat-file", "-s", h.String()); size != itoa(n) {
			t.Fatalf("%d bytes: git cat-file -s says %s", n, size)
		}
		if b, err := st.ReadBlob(h); err != nil || !bytes.Equal(b, data) {
			t.Fatalf("%d bytes: ReadBlob: %d bytes, %v", n, len(b), err)
		}
	}
	if out := gitOut(t, gd, "fsck", "--strict"); strings.Contains(out, "error") {
		t.Fatalf("git fsck: %s", out)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
