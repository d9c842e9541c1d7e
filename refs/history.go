package refs

import (
	"bytes"
	"fmt"
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
// parents before children.
func (st *Store) RevList(head Hash, not ...Hash) ([]Hash, error) {
	args := []string{"rev-list", "--reverse", "--topo-order", head.String()}
	for _, n := range not {
		args = append(args, "^"+n.String())
	}
	out, err := Git(st.CommonDir, []string{"GIT_DIR=" + st.CommonDir}, args...)
	if err != nil {
		return nil, err
	}
	var hs []Hash
	for _, line := range strings.Fields(out) {
		h, err := ParseHash(line)
		if err != nil {
			return nil, fmt.Errorf("rev-list: %w", err)
		}
		hs = append(hs, h)
	}
	return hs, nil
}

// AddedFiles returns, for each commit, the files it adds or changes
// against every one of its parents (every file of a root commit): what
// none of its parents holds. A merge's union adds nothing of its own.
func (st *Store) AddedFiles(commits []Hash) (map[Hash][]string, error) {
	var in bytes.Buffer
	for _, h := range commits {
		in.WriteString(h.String() + "\n")
	}
	out, err := GitInput(st.CommonDir, []string{"GIT_DIR=" + st.CommonDir}, in.Bytes(),
		"diff-tree", "--stdin", "-r", "-m", "--root", "--always", "--no-renames", "--diff-filter=AM", "-z")
	if err != nil {
		return nil, err
	}
	// With -z: "<commit>\0" opens the diff against one parent (a merge
	// has one per parent), then ":<modes> <ids> <status>\0<path>\0".
	res := make(map[Hash][]string, len(commits))
	var cur Hash
	var blocks []map[string]bool
	flush := func() {
		if len(blocks) == 0 {
			return
		}
		var paths []string
		for p := range blocks[0] {
			all := true
			for _, b := range blocks[1:] {
				all = all && b[p]
			}
			if all {
				paths = append(paths, p)
			}
		}
		res[cur] = paths
	}
	fields := strings.Split(out, "\x00")
	for i := 0; i < len(fields); i++ {
		f := strings.TrimPrefix(fields[i], "\n")
		switch {
		case f == "":
		case f[0] == ':':
			if i+1 >= len(fields) || len(blocks) == 0 {
				return nil, fmt.Errorf("diff-tree: unexpected %q", f)
			}
			blocks[len(blocks)-1][fields[i+1]] = true
			i++
		default:
			h, err := ParseHash(f)
			if err != nil {
				return nil, fmt.Errorf("diff-tree: unexpected %q", f)
			}
			if h != cur || len(blocks) == 0 {
				flush()
				cur, blocks = h, nil
			}
			blocks = append(blocks, map[string]bool{})
		}
	}
	flush()
	for _, h := range commits {
		if _, ok := res[h]; !ok {
			return nil, fmt.Errorf("diff-tree: no answer for %s", h)
		}
	}
	return res, nil
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
