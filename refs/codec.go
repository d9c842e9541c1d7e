package refs

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Trees and commits are encoded here, in git's own formats, rather than
// through go-git's plumbing/object: that package links OpenPGP, two
// elliptic-curve libraries, a diff library and image/jpeg into every
// process, whose package initialisation alone cost 0.3 ms per command. The
// two formats are small and fixed (Documentation/technical in git); go-git
// stays the reader of loose objects and packs.

// gitMode is the tree mode of an entry as git writes it.
func gitMode(e Entry) string {
	if e.Dir {
		return "40000"
	}
	return "100644"
}

// sortEntries sorts entries the way git sorts a tree: by name, a
// directory's name compared as if it ended in "/".
func sortEntries(entries []Entry) {
	key := func(e Entry) string {
		if e.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(entries, func(i, j int) bool { return key(entries[i]) < key(entries[j]) })
}

// encodeTree returns a tree object's content; entries must be sorted.
func encodeTree(entries []Entry) []byte {
	n := 0
	for _, e := range entries {
		n += len(e.Name) + 28
	}
	b := make([]byte, 0, n)
	for _, e := range entries {
		b = append(b, gitMode(e)...)
		b = append(b, ' ')
		b = append(b, e.Name...)
		b = append(b, 0)
		b = append(b, e.Hash[:]...)
	}
	return b
}

// decodeTree parses a tree object's content. Any mode that is not a
// directory's (a blob, an executable, a symlink, a submodule) is a
// non-directory entry.
func decodeTree(b []byte) ([]Entry, error) {
	var out []Entry
	for len(b) > 0 {
		sp := bytes.IndexByte(b, ' ')
		if sp <= 0 {
			return nil, fmt.Errorf("malformed tree entry")
		}
		mode := b[:sp]
		rest := b[sp+1:]
		nul := bytes.IndexByte(rest, 0)
		if nul <= 0 || len(rest) < nul+1+20 {
			return nil, fmt.Errorf("malformed tree entry")
		}
		var h Hash
		copy(h[:], rest[nul+1:nul+21])
		out = append(out, Entry{Name: string(rest[:nul]), Dir: string(mode) == "40000" || string(mode) == "040000", Hash: h})
		b = rest[nul+21:]
	}
	return out, nil
}

// Signature names the author and committer of ledger commits.
var Signature = struct{ Name, Email string }{"git-rally", "rally@localhost"}

// gitTime formats a commit time as git does: seconds and the zone offset.
func gitTime(t time.Time) string {
	_, off := t.Zone()
	sign := byte('+')
	if off < 0 {
		sign, off = '-', -off
	}
	return fmt.Sprintf("%d %c%02d%02d", t.Unix(), sign, off/3600, off/60%60)
}

// encodeCommit returns a commit's content; sig, when not empty, becomes
// its gpgsig header (each line after the first indented by a space, as
// git writes it).
func encodeCommit(c Commit, sig string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "tree %s\n", c.Tree)
	for _, p := range c.Parents {
		fmt.Fprintf(&b, "parent %s\n", p)
	}
	who := Signature.Name + " <" + Signature.Email + "> " + gitTime(c.When)
	b.WriteString("author " + who + "\ncommitter " + who + "\n")
	if sig != "" {
		b.WriteString("gpgsig ")
		b.WriteString(strings.ReplaceAll(strings.TrimSuffix(sig, "\n"), "\n", "\n "))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.WriteString(c.Message)
	return b.Bytes()
}

// decodeCommit parses a commit's content. It returns the gpgsig header's
// value (lines joined, ending in a newline; "" when unsigned) and the
// commit's bytes without that header, which is what the signature signs.
func decodeCommit(b []byte) (c Commit, sig string, payload []byte, err error) {
	end := bytes.Index(b, []byte("\n\n"))
	var head []byte
	if end < 0 {
		head, c.Message = b, ""
		if len(head) > 0 && head[len(head)-1] == '\n' {
			head = head[:len(head)-1]
		}
	} else {
		head, c.Message = b[:end], string(b[end+2:])
	}
	var sigLines []string
	sigStart, sigEnd := -1, -1
	inSig := false
	off := 0
	haveTree := false
	for _, line := range bytes.Split(head, []byte("\n")) {
		lineStart := off
		off += len(line) + 1
		if len(line) > 0 && line[0] == ' ' {
			if inSig {
				sigLines = append(sigLines, string(line[1:]))
				sigEnd = off
			}
			continue
		}
		inSig = false
		key, val, _ := bytes.Cut(line, []byte(" "))
		switch string(key) {
		case "tree":
			h, perr := ParseHash(string(val))
			if perr != nil {
				return c, "", nil, fmt.Errorf("malformed commit: %v", perr)
			}
			c.Tree, haveTree = h, true
		case "parent":
			h, perr := ParseHash(string(val))
			if perr != nil {
				return c, "", nil, fmt.Errorf("malformed commit: %v", perr)
			}
			c.Parents = append(c.Parents, h)
		case "committer":
			c.When = parseWhen(val)
		case "gpgsig":
			if sigStart < 0 {
				inSig = true
				sigStart, sigEnd = lineStart, off
				sigLines = append(sigLines, string(val))
			}
		}
	}
	if !haveTree {
		return c, "", nil, fmt.Errorf("malformed commit: no tree")
	}
	if sigStart >= 0 {
		sig = strings.Join(sigLines, "\n") + "\n"
		if sigEnd > len(b) {
			sigEnd = len(b)
		}
		payload = append(append(make([]byte, 0, len(b)-(sigEnd-sigStart)), b[:sigStart]...), b[sigEnd:]...)
	}
	return c, sig, payload, nil
}

// parseWhen reads the time at the end of an author or committer line:
// "Name <email> 1700000000 +0100".
func parseWhen(v []byte) time.Time {
	gt := bytes.LastIndexByte(v, '>')
	if gt < 0 {
		return time.Time{}
	}
	f := strings.Fields(string(v[gt+1:]))
	if len(f) < 1 {
		return time.Time{}
	}
	sec, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return time.Time{}
	}
	t := time.Unix(sec, 0)
	if len(f) >= 2 && len(f[1]) == 5 && (f[1][0] == '+' || f[1][0] == '-') {
		hh, e1 := strconv.Atoi(f[1][1:3])
		mm, e2 := strconv.Atoi(f[1][3:5])
		if e1 == nil && e2 == nil {
			off := hh*3600 + mm*60
			if f[1][0] == '-' {
				off = -off
			}
			return t.In(time.FixedZone("", off))
		}
	}
	return t.UTC()
}
