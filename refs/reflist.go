package refs

import (
	"bufio"
	"github.com/go-git/go-git/v5/plumbing"
	"os"
	"path/filepath"
	"strings"
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
	f, err := os.Open(filepath.Join(st.CommonDir, "packed-refs"))
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if len(line) < 42 || line[0] == '#' || line[0] == '^' {
			continue
		}
		name := line[41:]
		if _, loose := out[name]; loose {
			continue
		}
		if ok, _ := filepath.Match(pattern, name); !ok {
			continue
		}
		if h, err := ParseHash(line[:40]); err == nil {
			out[name] = h
		}
	}
	return out
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
