package refs

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
)

// parseIdx reads what go-git's decoder reads: git's own index of a packed
// repository, and one with large (64-bit) offsets written by go-git.
func TestParseIdxAsGoGit(t *testing.T) {
	gd := gitRepo(t)
	st, _ := Open(gd)
	var info strings.Builder
	for i := 0; i < 1500; i++ {
		h, err := st.WriteBlob([]byte(fmt.Sprintf("blob %d\n", i)))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&info, "100644 %s\tf/%d\n", h, i)
	}
	st.Close()
	ui := exec.Command("git", "--git-dir", gd, "update-index", "--add", "--index-info")
	ui.Stdin = strings.NewReader(info.String())
	if out, err := ui.CombinedOutput(); err != nil {
		t.Fatalf("git update-index: %v %s", err, out)
	}
	gitOut(t, gd, "commit", "-q", "-m", "blobs")
	gitOut(t, gd, "repack", "-a", "-d", "-q")
	b, err := os.ReadFile(mustGlob(t, filepath.Join(gd, "objects", "pack", "*.idx")))
	if err != nil {
		t.Fatal(err)
	}
	same(t, "git's index", b)

	large := testIdx(t, 2000, true)
	same(t, "an index with large offsets", large)
	if got, _ := parseIdx(large); len(got.Offset64) == 0 {
		t.Fatal("no large offsets parsed")
	}
}

// testIdx is a pack index of n random ids written by go-git; with large,
// a third of the offsets are beyond 32 bits.
func testIdx(t *testing.T, n int, large bool) []byte {
	t.Helper()
	w := new(idxfile.Writer)
	r := rand.New(rand.NewPCG(3, 4))
	w.OnHeader(uint32(n))
	for i := 0; i < n; i++ {
		var h plumbing.Hash
		binary.BigEndian.PutUint64(h[:], r.Uint64())
		binary.BigEndian.PutUint64(h[8:], r.Uint64())
		pos := uint64(12 + 100*i)
		if large && i%3 == 0 {
			pos += 1 << 33
		}
		w.Add(h, pos, r.Uint32())
	}
	w.OnFooter(plumbing.Hash{1, 2, 3})
	idx, err := w.Index()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := idxfile.NewEncoder(&buf).Encode(idx); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func same(t *testing.T, what string, b []byte) {
	t.Helper()
	want := idxfile.NewMemoryIndex()
	if err := idxfile.NewDecoder(bytes.NewReader(b)).Decode(want); err != nil {
		t.Fatalf("%s: go-git: %v", what, err)
	}
	got, err := parseIdx(b)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	for _, f := range []string{"Version", "Fanout", "FanoutMapping", "Names", "Offset32", "CRC32", "Offset64", "PackfileChecksum", "IdxChecksum"} {
		g, w := reflect.ValueOf(got).Elem().FieldByName(f).Interface(), reflect.ValueOf(want).Elem().FieldByName(f).Interface()
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("%s: %s differs from go-git's", what, f)
		}
	}
	// And every object is found where go-git finds it.
	for k := range 256 {
		m := want.FanoutMapping[k]
		if m < 0 {
			continue
		}
		for i := 0; i+20 <= len(want.Names[m]); i += 20 {
			h := plumbing.Hash(want.Names[m][i : i+20])
			o1, err1 := got.FindOffset(h)
			o2, err2 := want.FindOffset(h)
			if o1 != o2 || err1 != nil || err2 != nil {
				t.Fatalf("%s: %s at %d (%v), go-git %d (%v)", what, h, o1, err1, o2, err2)
			}
		}
	}
}

// A damaged index is refused, not read past its end.
func TestParseIdxRefusesDamage(t *testing.T) {
	good := testIdx(t, 300, false)
	if _, err := parseIdx(good); err != nil {
		t.Fatal(err)
	}
	damage := map[string]func(b []byte) []byte{
		"empty":           func(b []byte) []byte { return nil },
		"truncated":       func(b []byte) []byte { return b[:len(b)-1] },
		"one byte more":   func(b []byte) []byte { return append(b, 0) },
		"bad magic":       func(b []byte) []byte { b[0] = 'x'; return b },
		"version 3":       func(b []byte) []byte { b[7] = 3; return b },
		"fan-out falls":   func(b []byte) []byte { binary.BigEndian.PutUint32(b[8+4*10:], 1<<30); return b },
		"count too large": func(b []byte) []byte { binary.BigEndian.PutUint32(b[8+4*255:], 1<<31); return b },
		"a large offset, no table": func(b []byte) []byte {
			n := binary.BigEndian.Uint32(b[8+4*255:])
			b[8+1024+24*int(n)] |= 0x80
			return b
		},
	}
	for name, f := range damage {
		if _, err := parseIdx(f(bytes.Clone(good))); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}
