package refs

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// RefsMatching returns the refs, loose or packed, whose names match
// pattern: a ref name in which each "*" stands for one path component
// (refs/rally-remotes/*/checkpoints/*). A loose ref wins over a packed one
// of the same name; a value that is not an object id is left out.
func (st *Store) RefsMatching(pattern string) map[string]Hash {
	out := map[string]Hash{}
	if ms, err := filepath.Glob(filepath.Join(st.CommonDir, filepath.FromSlash(pattern))); err == nil {
		for _, p := range ms {
			rel, err := filepath.Rel(st.CommonDir, p)
			if err != nil || strings.HasSuffix(p, ".lock") {
				continue
			}
			b, err := os.ReadFile(p)
			if err != nil {
				continue // a directory, or gone meanwhile
			}
			if h, err := ParseHash(bytesTrim(b)); err == nil {
				out[filepath.ToSlash(rel)] = h
			}
		}
	}
	// A packed-refs that is not there or not readable: the loose refs alone.
	_ = ScanPackedRefs(st.CommonDir, func(name, id string) bool {
		if _, loose := out[name]; loose {
			return true
		}
		if ok, _ := filepath.Match(pattern, name); !ok {
			return true
		}
		if h, err := ParseHash(id); err == nil {
			out[name] = h
		}
		return true
	})
	return out
}

// ScanPackedRefs calls fn with the name and object id (hex) of each ref
// in commonDir's packed-refs, in the file's order, until fn returns false;
// comments and peeled lines (^) are passed over. The error is opening the
// file's (fs.ErrNotExist where there is none) or reading it.
func ScanPackedRefs(commonDir string, fn func(name, id string) bool) error {
	f, err := os.Open(filepath.Join(commonDir, "packed-refs"))
	if err != nil {
		return fmt.Errorf("reading packed-refs: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if len(line) < 42 || line[0] == '#' || line[0] == '^' {
			continue
		}
		if !fn(line[41:], line[:40]) {
			return nil
		}
	}
	return sc.Err()
}

// DeleteRef removes a loose ref (one rally alone writes: a checkpoint of
// this clone's). A packed copy is left to git.
func (st *Store) DeleteRef(name string) error {
	err := os.Remove(filepath.Join(st.CommonDir, filepath.FromSlash(name)))
	if os.IsNotExist(err) {
		return nil
	}
	return err
}

// WriteCommitWith stores a commit signed by s (nil: unsigned), whatever
// the store's own Signer: a checkpoint is signed with the key of its
// writer even where ledger commits are not signed.
func (st *Store) WriteCommitWith(c Commit, s Signer) (Hash, error) {
	sig := ""
	if s != nil {
		b, err := s.Sign(encodeCommit(c, ""))
		if err != nil {
			return ZeroHash, err
		}
		sig = string(b)
	}
	return st.put(plumbing.CommitObject, encodeCommit(c, sig))
}
