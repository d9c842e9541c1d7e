package refs

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// The history walks of signature verification (ledger/verdict.go): the
// commits a ledger gained, what each brought in, and their signatures.
// Many commits at once (a first verification of a long ledger, a large
// sync) go through the git command line, which reads and diffs trees
// natively; a few go through go-git in-process.

// RevList returns the commits reachable from head and from none of not,
// parents before children. git's answer is read as it comes: a million
// commits were 41 MB of text and 16 MB of strings besides their 20 MB
// of ids.
func (st *Store) RevList(head Hash, not ...Hash) ([]Hash, error) {
	args := []string{"rev-list", "--reverse", "--topo-order", head.String()}
	for _, n := range not {
		args = append(args, "^"+n.String())
	}
	var hs []Hash
	read := func(r io.Reader) error {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			h, err := ParseHash(sc.Text())
			if err != nil {
				return fmt.Errorf("rev-list: %w", err)
			}
			hs = append(hs, h)
		}
		return sc.Err()
	}
	if err := GitStream(st.CommonDir, []string{"GIT_DIR=" + st.CommonDir}, nil, read, args...); err != nil {
		return nil, err
	}
	return hs, nil
}

// AddedFiles returns, for each commit, the files it adds or changes
// against every one of its parents (every file of a root commit): what
// none of its parents holds. A merge's union adds nothing of its own.
func (st *Store) AddedFiles(commits []Hash) (map[Hash][]string, error) {
	res := make(map[Hash][]string, len(commits))
	for _, h := range commits {
		res[h] = nil
	}
	// Every commit may be a merge here: each block is held.
	err := st.EachAddedFile(commits, func(Hash) bool { return true }, func(h Hash, p []byte) {
		res[h] = append(res[h], string(p))
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// EachAddedFile calls fn with each file AddedFiles would list, commit by
// commit, as git's diff-tree answers, holding nothing of the answer: a
// first verification of a ledger of a million facts listed them all at
// once (the output as one string, split, a set per commit: 0.5 GB). Only
// the diffs of a commit merge says is a merge (more than one parent) are
// held, to keep what it adds against every parent. p is valid during the
// call only.
func (st *Store) EachAddedFile(commits []Hash, merge func(Hash) bool, fn func(h Hash, p []byte)) error {
	var in bytes.Buffer
	for _, h := range commits {
		in.WriteString(h.String() + "\n")
	}
	// With -z: "<commit>\0" opens the diff against one parent (a merge
	// has one per parent), then ":<modes> <ids> <status>\0<path>\0".
	seen := make(map[Hash]bool, len(commits))
	var cur Hash
	isMerge := false
	var blocks []map[string]bool
	flush := func() {
		if len(blocks) == 0 {
			return
		}
		for p := range blocks[0] {
			all := true
			for _, b := range blocks[1:] {
				all = all && b[p]
			}
			if all {
				fn(cur, []byte(p))
			}
		}
		blocks = nil
	}
	read := func(r io.Reader) error {
		br := bufio.NewReaderSize(r, 64<<10)
		started := false
		for {
			f, err := br.ReadSlice(0)
			if err == io.EOF && len(f) == 0 {
				break
			}
			if err != nil {
				return fmt.Errorf("diff-tree: %w", err)
			}
			f = bytes.TrimPrefix(bytes.TrimSuffix(f, []byte{0}), []byte("\n"))
			switch {
			case len(f) == 0:
			case f[0] == ':':
				if !started {
					return fmt.Errorf("diff-tree: unexpected %q", f)
				}
				p, err := br.ReadSlice(0)
				if err != nil {
					return fmt.Errorf("diff-tree: a change without its path: %w", err)
				}
				p = bytes.TrimSuffix(p, []byte{0})
				if isMerge {
					blocks[len(blocks)-1][string(p)] = true
				} else {
					fn(cur, p)
				}
			default:
				h, err := ParseHash(string(f))
				if err != nil {
					return fmt.Errorf("diff-tree: unexpected %q", f)
				}
				if h != cur || !started {
					flush()
					cur, isMerge, started = h, merge(h), true
					seen[h] = true
				}
				if isMerge {
					blocks = append(blocks, map[string]bool{})
				}
			}
		}
		flush()
		return nil
	}
	if len(commits) == 0 {
		return nil
	}
	if err := GitStream(st.CommonDir, []string{"GIT_DIR=" + st.CommonDir}, in.Bytes(), read, append(PackWindows(),
		"diff-tree", "--stdin", "-r", "-m", "--root", "--always", "--no-renames", "--diff-filter=AM", "-z")...); err != nil {
		return err
	}
	for _, h := range commits {
		if !seen[h] {
			return fmt.Errorf("diff-tree: no answer for %s", h)
		}
	}
	return nil
}

// ReadSignedCommits reads commits with their signatures, from
// BatchThreshold on through one `git cat-file --batch`.
func (st *Store) ReadSignedCommits(hs []Hash) ([]SignedCommit, error) {
	out := make([]SignedCommit, len(hs))
	if len(hs) < BatchThreshold {
		for i, h := range hs {
			sc, err := st.ReadSignedCommit(h)
			if err != nil {
				return nil, err
			}
			out[i] = sc
		}
		return out, nil
	}
	// Streamed, never held whole: a commit over the cap (a hostile
	// remote's 200 MiB message) is skipped by the stream, an error here.
	errs := make([]error, len(hs))
	err := st.streamRange(0, len(hs), func(i int) Hash { return hs[i] }, func(i int, d []byte) {
		if size, ok := Oversize(d); ok {
			errs[i] = &TooLargeError{hs[i], size, MaxBlob}
			return
		}
		out[i], errs[i] = parseSignedCommit(d)
	})
	if err != nil {
		return nil, err
	}
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("commit %s: %w", hs[i], err)
		}
	}
	return out, nil
}

// parseSignedCommit reads a raw commit: its tree, parents, committer
// time, the gpgsig header and the commit without that header (what git
// verifies the signature against).
func parseSignedCommit(raw []byte) (SignedCommit, error) {
	var sc SignedCommit
	end := bytes.Index(raw, []byte("\n\n")) + 1 // the headers, each line with its newline
	if end <= 0 {
		end = len(raw)
	}
	var payload, sig bytes.Buffer
	inSig := false
	lines := bytes.SplitAfter(raw[:end], []byte("\n"))
	for _, line := range lines {
		if inSig && bytes.HasPrefix(line, []byte(" ")) {
			sig.Write(line[1:])
			continue
		}
		inSig = false
		text := strings.TrimSuffix(string(line), "\n")
		key, val, _ := strings.Cut(text, " ")
		switch key {
		case "gpgsig":
			inSig = true
			sig.WriteString(val + "\n")
			continue
		case "tree":
			h, err := ParseHash(val)
			if err != nil {
				return sc, err
			}
			sc.Tree = h
		case "parent":
			h, err := ParseHash(val)
			if err != nil {
				return sc, err
			}
			sc.Parents = append(sc.Parents, h)
		case "committer":
			if f := strings.Fields(val); len(f) >= 2 {
				if sec, err := strconv.ParseInt(f[len(f)-2], 10, 64); err == nil {
					sc.When = time.Unix(sec, 0).UTC()
				}
			}
		}
		payload.Write(line)
	}
	payload.Write(raw[end:])
	if end < len(raw) {
		sc.Message = string(raw[end+1:])
	}
	if sig.Len() > 0 {
		sc.Signature, sc.Payload = sig.String(), payload.Bytes()
	}
	return sc, nil
}
