package refs

import (
	"testing"
)

// The hasher gives the ids the store writes objects under.
func TestObjectHasherMatchesStore(t *testing.T) {
	st, err := Open(gitRepo(t))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	o := NewObjectHasher()
	for _, data := range [][]byte{nil, []byte("x\n"), []byte(`{"v":1,"id":"f_0123456789abcdef"}` + "\n")} {
		h, err := st.WriteBlob(data)
		if err != nil {
			t.Fatal(err)
		}
		if got := o.BlobID(data); got != h {
			t.Fatalf("BlobID(%q) = %s, store wrote %s", data, got, h)
		}
	}
	b, _ := st.WriteBlob([]byte("b\n"))
	var h Hash
	es := []Entry{{Name: "a.json", Hash: b}, {Name: "a", Dir: true, Hash: b}, {Name: "a-", Hash: b}, {Name: "b.json", Hash: b}}
	h, err = st.WriteTree(es)
	if err != nil {
		t.Fatal(err)
	}
	sorted := append([]Entry(nil), es...)
	sortEntries(sorted)
	got, ok := o.TreeID(sorted)
	if !ok || got != h {
		t.Fatalf("TreeID = %s %v, store wrote %s", got, ok, h)
	}
	if _, ok := o.TreeID(es); ok {
		t.Fatal("TreeID took entries out of git's order")
	}
}
