package refs_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-rally/git-rally/refs"
)

// Benchmarks of the object store and the ref lock. They run only with
// -bench; large repositories are skipped under -short.

func benchRepo(b *testing.B) (dir, common string) {
	b.Helper()
	dir = b.TempDir()
	if _, err := refs.Git(dir, nil, "init", "-q", "."); err != nil {
		b.Fatal(err)
	}
	return dir, filepath.Join(dir, ".git")
}

func openStore(b *testing.B, common string) *refs.Store {
	b.Helper()
	st, err := refs.Open(common)
	if err != nil {
		b.Fatal(err)
	}
	return st
}

func BenchmarkWriteBlob(b *testing.B) {
	_, common := benchRepo(b)
	st := openStore(b, common)
	defer st.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		line := fmt.Sprintf(`{"v":1,"id":"f_%016x","kind":"note","tool":"bench","clock":%d,"subject":"a note"}`+"\n", i, i)
		if _, err := st.WriteBlob([]byte(line)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteTree(b *testing.B) {
	for _, n := range []int{8, 256} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			_, common := benchRepo(b)
			st := openStore(b, common)
			defer st.Close()
			blob, err := st.WriteBlob([]byte("x\n"))
			if err != nil {
				b.Fatal(err)
			}
			es := make([]refs.Entry, n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for j := range es {
					es[j] = refs.Entry{Name: fmt.Sprintf("f_%08x%08x.json", i, j), Hash: blob}
				}
				if _, err := st.WriteTree(es); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLockRefCommit is the ref update of every append: the queue
// flock, <ref>.lock, read, write, fsync, rename, directory fsync.
func BenchmarkLockRefCommit(b *testing.B) {
	_, common := benchRepo(b)
	st := openStore(b, common)
	defer st.Close()
	tree, err := st.WriteTree(nil)
	if err != nil {
		b.Fatal(err)
	}
	c, err := st.WriteCommit(refs.Commit{Tree: tree, Message: "bench\n", When: time.Now()})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l, err := st.LockRef("refs/rally/bench")
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Commit(c); err != nil {
			b.Fatal(err)
		}
		l.Unlock()
	}
}

// BenchmarkReadCommit opens a store and reads one commit, as every append
// does with the ledger head. Loose it is one file; packed, go-git first
// decodes the whole pack index, so the cost follows the number of objects
// in the repository's packs, not the ledger.
func BenchmarkReadCommit(b *testing.B) {
	b.Run("loose", func(b *testing.B) {
		_, common := benchRepo(b)
		st := openStore(b, common)
		tree, _ := st.WriteTree(nil)
		c, err := st.WriteCommit(refs.Commit{Tree: tree, Message: "bench\n", When: time.Now()})
		st.Close()
		if err != nil {
			b.Fatal(err)
		}
		readCommitLoop(b, common, c)
	})
	for _, n := range []int{10000, 200000} {
		b.Run(fmt.Sprintf("packed-objects=%dk", n/1000), func(b *testing.B) {
			if n > 10000 && testing.Short() {
				b.Skip("large pack skipped under -short")
			}
			dir, common := benchRepo(b)
			c := packedRepo(b, dir, n)
			readCommitLoop(b, common, c)
		})
	}
}

func readCommitLoop(b *testing.B, common string, c refs.Hash) {
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		st, err := refs.Open(common)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := st.ReadCommit(c); err != nil {
			b.Fatal(err)
		}
		st.Close()
	}
}

// packedRepo writes n small blobs and one commit holding them with git
// fast-import, packs everything with git gc, and returns the commit.
func packedRepo(b *testing.B, dir string, n int) refs.Hash {
	b.Helper()
	var s bytes.Buffer
	for i := 1; i <= n; i++ {
		data := fmt.Sprintf("blob number %d\n", i)
		fmt.Fprintf(&s, "blob\nmark :%d\ndata %d\n%s\n", i, len(data), data)
	}
	fmt.Fprintf(&s, "commit refs/heads/main\ncommitter B <b@example.com> 1700000000 +0000\ndata 5\nbench\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&s, "M 100644 :%d d%03d/f%d\n", i, i%500, i)
	}
	s.WriteString("\n")
	if _, err := refs.GitInput(dir, nil, s.Bytes(), "fast-import", "--quiet"); err != nil {
		b.Fatal(err)
	}
	if _, err := refs.Git(dir, nil, "gc", "--quiet"); err != nil {
		b.Fatal(err)
	}
	out, err := refs.Git(dir, nil, "rev-parse", "refs/heads/main")
	if err != nil {
		b.Fatal(err)
	}
	h, err := refs.ParseHash(strings.TrimSpace(out))
	if err != nil {
		b.Fatal(err)
	}
	return h
}
